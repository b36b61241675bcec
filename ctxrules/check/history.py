"""Predicates for the history and for commits as values: invariants 1, 2, 8 (rendering) and 9."""

from __future__ import annotations

from returns.result import Success

from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit, commit_from_json, commit_to_json
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
    return [
        Violation(
            2,
            (commit.id,),
            "the same commit and id when rebuilt from its content",
            "a different one",
        )
    ]


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
