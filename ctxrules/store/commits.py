"""The order commits are stored in: each after its parents, so a stored parent id always resolves."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from ctxrules.commit import ContextCommit


def parents_first(batch: Iterable[ContextCommit]) -> list[ContextCommit]:
    """The commits ordered so each comes after its parents in the batch, else as given.

    >>> a = ContextCommit("s", summary="a")
    >>> b = ContextCommit("s", parent_ids=(a.id,), summary="b")
    >>> [c.summary for c in parents_first([b, a, b])]
    ['a', 'b']
    """
    by_id = {commit.id: commit for commit in batch}
    waiting = {
        commit.id: {p for p in commit.parent_ids if p in by_id and p != commit.id}
        for commit in by_id.values()
    }
    children: dict[str, list[str]] = {}
    for commit_id, parents in waiting.items():
        for parent in parents:
            children.setdefault(parent, []).append(commit_id)
    ready = deque(commit_id for commit_id, parents in waiting.items() if not parents)
    ordered: list[ContextCommit] = []
    while ready:
        commit_id = ready.popleft()
        ordered.append(by_id[commit_id])
        for child in children.get(commit_id, ()):
            waiting[child].discard(commit_id)
            if not waiting[child]:
                ready.append(child)
    # Content addressing rules out cycles; a forged batch with one keeps its given order.
    placed = {commit.id for commit in ordered}
    return ordered + [commit for commit in by_id.values() if commit.id not in placed]
