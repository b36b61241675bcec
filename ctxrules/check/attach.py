"""Predicates for attach and merge: invariants 6, 7 and the attached half of 13."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping

from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.commit.attach import is_marker
from ctxrules.dag import Graph, ancestors, is_merge_instruction


def attached_once(commit: ContextCommit) -> list[Violation]:
    """Invariant 6: each source commit is expanded at most once (one pair of markers)."""
    return attached_once_of(commit.items, commit.attached)


def attached_once_of(items: Iterable[ContextItem], attached: Collection[str]) -> list[Violation]:
    """Invariant 6 on a commit's ``items`` and ``attached`` sources (only markers and copies count)."""
    items = list(items)
    markers = Counter(i.source_node_id for i in items if is_marker(i))
    found = [
        Violation(6, (marker,), "one expansion per source commit (two markers)", f"{count} markers")
        for marker, count in sorted(markers.items())
        if count > 2
    ]
    # A second expansion also shows as the same source node twice under one source.
    copies = Counter(
        (i.attached_from, i.source_node_id) for i in items if i.attached_from and not is_marker(i)
    )
    found.extend(
        Violation(6, (node,), f"one copy of each node attached from {source}", f"{count} copies")
        for (source, node), count in sorted(copies.items(), key=str)
        if count > 1
    )
    untracked = sorted({str(i.attached_from) for i in items if i.attached_from} - set(attached))
    if untracked:
        found.append(
            Violation(
                6,
                tuple(untracked),
                "every attached source recorded in commit.attached",
                "unrecorded sources",
            )
        )
    return found


def no_block_expanded(before: ContextCommit, after: ContextCommit) -> list[Violation]:
    """Invariant 6 for a rule: it adds no attached item (only attach expands a source commit).

    A rule that copies a block again, under its own source or a new one, is reported here
    rather than as the items it added.
    """
    old = Counter((i.attached_from, i.source_node_id) for i in before.items if i.attached_from)
    new = Counter((i.attached_from, i.source_node_id) for i in after.items if i.attached_from)
    return [
        Violation(
            6,
            (node,),
            f"no copy of an item attached from {source} made by a rule",
            f"{count} new",
        )
        for (source, node), count in sorted((new - old).items(), key=str)
    ]


def multi_parent_from_merge(
    commit: ContextCommit, graph: Graph, commits: Mapping[str, ContextCommit]
) -> list[Violation]:
    """Invariant 7: a commit with several parents was built past a merge naming those peers."""
    if len(commit.parent_ids) <= 1:
        return []
    parent = commits.get(commit.parent_ids[0])
    stop = parent.head_node_id if parent is not None else None
    for call in ancestors(graph, commit.head_node_id):
        if call.id == stop:
            break
        if is_merge_instruction(call):
            peers = tuple(str(p) for p in call.metadata.get("peers", ()))  # type: ignore[union-attr]
            if peers == commit.parent_ids[1:] or commit.parent_ids == peers:
                return []
    return [
        Violation(
            7,
            (commit.id,),
            "several parents only after a merge naming them",
            f"parents {list(commit.parent_ids)}",
        )
    ]


def attached_traceable(
    commit: ContextCommit, commits: Mapping[str, ContextCommit]
) -> list[Violation]:
    """Invariant 13 for attached items: each names a known source commit holding its node."""
    found: list[Violation] = []
    holdings: dict[str, set[str]] = {}
    for item in commit.items:
        source_id = item.attached_from
        if source_id is None or is_marker(item) or item.source_node_id.startswith("attach-failed:"):
            continue
        source = commits.get(source_id)
        if source is None:
            found.append(
                Violation(
                    13,
                    (item.source_node_id,),
                    f"source commit {source_id} known",
                    "an unknown source",
                )
            )
            continue
        held = holdings.setdefault(source_id, {i.source_node_id for i in source.items})
        if item.source_node_id not in held:
            found.append(
                Violation(
                    13,
                    (item.source_node_id,),
                    f"node held by source commit {source_id}",
                    "a node the source lacks",
                )
            )
    return found
