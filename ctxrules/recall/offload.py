"""Offload: the whole original of a large tightened tool result, kept in a blob store.

The context keeps a preview (the cap rule's head and tail, or an aged stub) with the
handle and the size; the store keeps the whole text, content-addressed, so a host can
answer ``recall`` for it from the store alone. Which items to offload is decided purely
(`offload_plan`); `offload` is the one effect, run by the host after a turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from returns.result import Failure, Result, Success

from ctxrules.commit import ContextCommit, State
from ctxrules.dag import Graph
from ctxrules.recall.lookup import node_original

#: Originals at least this long (characters) are offloaded once their item is tightened;
#: the cap rule's default ``max_chars``, so every capped result is offloaded.
OFFLOAD_CHARS = 4000


@runtime_checkable
class BlobStore(Protocol):
    """Where offloaded originals live: `ctxrules.store.SqliteStore` is one.

    ``put_blob`` is idempotent for the same text and refuses another text under a handle.
    """

    def put_blob(self, session_id: str, handle: str, text: str) -> Result[str, object]:
        """Keep ``text`` whole under ``handle``; its content digest."""
        ...

    def get_blob(self, session_id: str, handle: str) -> Result[str | None, object]:
        """The text kept under ``handle``, or None."""
        ...


def changed_positions(before: ContextCommit | None, commit: ContextCommit) -> Sequence[int] | None:
    """The positions of ``commit`` that may have tightened since ``before``; None when unknown.

    Known when ``commit`` was generated from ``before``: the positions its rules replaced
    and the items it added. A compaction (which moves positions) or another parent gives None.

    >>> from ctxrules.commit import ContextItem
    >>> changed_positions(None, ContextCommit("s")) is None
    True
    >>> c = ContextCommit("s"); changed_positions(c, c)
    ()
    """
    if before is commit:
        # The same request again (a resumed session's first one reuses the stored commit).
        return ()
    if before is None or commit.replaced is None or commit.parent_ids != (before.id,):
        return None
    return sorted({*commit.replaced, *range(len(before.items), len(commit.items))})


def offload_plan(
    commit: ContextCommit,
    graph: Graph,
    min_chars: int = OFFLOAD_CHARS,
    *,
    positions: Sequence[int] | None = None,
) -> tuple[tuple[str, str], ...]:
    """(handle, whole original) of every tool item tighter than full whose original is large.

    ``positions`` limits the look to those items (see `changed_positions`); None means all.

    >>> from ctxrules.commit import ContextItem
    >>> from ctxrules.dag import Call
    >>> g = Graph().append(Call("t", "tool", name="cat", output="x" * 5000)).unwrap()
    >>> capped = ContextCommit("s").with_items([ContextItem("t", "tool", state="aged", rendered="x…")])
    >>> [(h, len(text)) for h, text in offload_plan(capped, g)]
    [('h:4o4yutnd', 5000)]
    """
    planned: list[tuple[str, str]] = []
    items = commit.items
    for item in items if positions is None else (items[p] for p in positions if p < len(items)):
        if not item.is_tool or item.state.tightness <= State.FULL.tightness:
            continue
        original = node_original(graph, item.source_node_id)
        if original is not None and len(original.text) >= min_chars:
            planned.append((original.handle, original.text))
    return tuple(planned)


def offload(
    store: BlobStore,
    session_id: str,
    commit: ContextCommit,
    graph: Graph,
    min_chars: int = OFFLOAD_CHARS,
) -> Result[int, object]:
    """Keep every planned original in ``store``; how many were written (or re-confirmed)."""
    count = 0
    for handle, text in offload_plan(commit, graph, min_chars):
        written = store.put_blob(session_id, handle, text)
        if isinstance(written, Failure):
            return Failure(written.failure())
        count += 1
    return Success(count)
