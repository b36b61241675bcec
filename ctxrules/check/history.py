"""Predicates for the history and for commits as values: invariants 1, 2, 8 (rendering) and 9."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from returns.result import Success

from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit, ContextItem, commit_from_json, commit_to_json
from ctxrules.commit.commit import chunks_digest
from ctxrules.commit.item import item_digest
from ctxrules.commit.serialize import commit_header, commit_of_header
from ctxrules.commit.vector import CHUNK, Chunk, ItemVector
from ctxrules.dag import Graph, Session, Status
from ctxrules.render import render_commit


def append_only(before: Graph, after: Graph) -> list[Violation]:
    """Invariant 1: every earlier node is still there, unchanged but for one ``complete``."""
    found: list[Violation] = []
    if list(after.order[: len(before.order)]) != list(before.order):
        found.append(
            Violation(1, (), "the earlier nodes first, in the same order", "a different order")
        )
    for node_id, old in before.nodes.items():
        new = after.nodes.get(node_id)
        if new is None:
            found.append(Violation(1, (node_id,), "the node kept", "the node gone"))
        elif new != old:
            completed = old.status is Status.RUNNING and new.status is not Status.RUNNING
            same_rest = (new.id, new.seq, new.role, new.input, new.predecessor, new.caller) == (
                old.id,
                old.seq,
                old.role,
                old.input,
                old.predecessor,
                old.caller,
            )
            if not (completed and same_rest):
                found.append(
                    Violation(
                        1, (node_id,), "the node unchanged (or completed once)", "changed content"
                    )
                )
    return found


def content_addressed(commit: ContextCommit) -> list[Violation]:
    """Invariant 2: the commit rebuilt from its JSON is equal and has the same id."""
    rebuilt = commit_from_json(commit_to_json(commit))
    if (
        isinstance(rebuilt, Success)
        and rebuilt.unwrap() == commit
        and rebuilt.unwrap().id == commit.id
    ):
        return []
    return [_not_addressed(commit)]


def contents_addressed(commits: Iterable[ContextCommit]) -> list[Violation]:
    """`content_addressed` of each commit in turn, each chunk the commits share rebuilt once.

    A session's stored commits share most of their chunks (the same objects); rebuilt
    whole, each commit read every item again (at 10,000 messages, a quarter of
    `ctxrules verify`'s profile).
    Here each item of a chunk not seen before is rebuilt from its JSON and its digest
    worked out afresh; a commit is rebuilt from its header and those items, with its
    items digest summed chunk by chunk. ``content_addressed`` does the same in one pass.
    """
    rebuilt: dict[int, tuple[Chunk, bool]] = {}
    shares: dict[tuple[int, int], tuple[object, int]] = {}
    found: list[Violation] = []
    for commit in commits:
        chunks = [chunk for chunk, _, _ in commit.items.runs(0, len(commit.items))]
        if not (
            all(_rebuilds(chunk, rebuilt) for chunk in chunks) and _same(commit, chunks, shares)
        ):
            found.append(_not_addressed(commit))
    return found


def _rebuilds(chunk: Chunk, known: dict[int, tuple[Chunk, bool]]) -> bool:
    """Whether each item of ``chunk`` rebuilt from its JSON is equal, with the digest it carries."""
    kept = known.get(id(chunk))
    if kept is None or kept[0] is not chunk:
        same = True
        for item in chunk:
            try:
                fields: dict[str, Any] = item.to_json()
                again = ContextItem(**fields)
            except (TypeError, ValueError):
                same = False
                break
            if again != item or item_digest(again) != item.digest:
                same = False
                break
        # The chunk is kept with its answer, so its id cannot be reused by another.
        kept = known[id(chunk)] = (chunk, same)
    return kept[1]


def _same(
    commit: ContextCommit, chunks: list[Chunk], shares: dict[tuple[int, int], tuple[object, int]]
) -> bool:
    """Whether the commit rebuilt from its header's JSON and its (rebuilt-equal) items is equal, with its id."""
    try:
        again = commit_of_header(
            commit_header(commit),
            ItemVector.from_chunks(chunks),
            digest=chunks_digest(chunks, CHUNK, shares),
            hidden=commit.hidden,
            summary_at=commit.summary_at,
        )
    except (KeyError, TypeError, ValueError):
        return False
    return again == commit and again.id == commit.id


def _not_addressed(commit: ContextCommit) -> Violation:
    return Violation(
        2, (commit.id,), "the same commit and id when rebuilt from its content", "a different one"
    )


def render_pure(commit: ContextCommit) -> list[Violation]:
    """Invariant 8 for rendering: the commit renders equal twice and after a JSON round trip."""
    first = render_commit(commit)
    rebuilt = commit_from_json(commit_to_json(commit))
    again = render_commit(rebuilt.unwrap()) if isinstance(rebuilt, Success) else ()
    if first == render_commit(commit) == again:
        return []
    return [Violation(8, (commit.id,), "equal messages for equal commits", "different messages")]


def checkout_pure(before: Session, after: Session) -> list[Violation]:
    """Invariant 9: a checkout returns the very same graph and running set; only the head moves."""
    if after.graph is before.graph and after.running == before.running:
        return []
    return [
        Violation(
            9, (after.head or "",), "the same graph, nothing appended or rerun", "a changed graph"
        )
    ]
