"""What changed between two requests, reading only the chunks that differ (pure).

`diff_commits` compares two commits item by item: at 100,000 items that reads every chunk
of both. Two requests of a session share every chunk before the first change, by identity
or by the key a store read them under, so the shared prefix is skipped chunk by chunk;
after it a chunk at the same place with the same content is skipped too, and one wholly
inside the newer commit's summarized spans is counted from the spans (a summarized item
stays summarized: invariant 3). Only the chunks left are read, and an item is looked up in
the older commit near its own position first, in the whole tail only when not found there.
The result equals `diff_commits`'s (a property test compares them).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence

import attrs

from ctxrules.commit import ContextCommit, ContextItem, State

# An item's identity (`_key`) and its change's kind (`_kind`) are `diff_commits`'s own.
from ctxrules.commit.diff import (
    ChangeKind,
    CommitDiff,
    ItemChange,
    _key,
    _kind,
    diff_commits,
    sends_same,
)
from ctxrules.commit.vector import CHUNK, AnyChunk, Chunk, LazyChunk

#: Reads a chunk's items (a cache may keep chunks read for one request for the next).
ReadChunk = Callable[[AnyChunk], Sequence[ContextItem]]
Spans = tuple[tuple[int, int], ...]


@attrs.frozen
class Delta:
    """The counts a request's row shows, and up to ``limit`` of the changes themselves."""

    prefix_end: int
    prefix_tokens: int
    added: int = 0
    tightened: int = 0
    folded: int = 0
    rewritten: int = 0
    removed: int = 0
    summary_added: bool = False
    changes: tuple[ItemChange, ...] = ()

    @property
    def extends(self) -> bool:
        """Whether the newer commit only adds items at the end of the older one."""
        return not (self.tightened or self.folded or self.rewritten or self.removed)

    @property
    def count(self) -> int:
        """How many items are new or changed."""
        return self.added + self.tightened + self.folded + self.rewritten


def plain(chunk: AnyChunk) -> Sequence[ContextItem]:
    """A chunk's items, read if it is a placeholder (no cache)."""
    return chunk.chunk() if isinstance(chunk, LazyChunk) else chunk


def _same(x: AnyChunk, y: AnyChunk, read: ReadChunk) -> bool:
    if x is y:
        return True
    if isinstance(x, LazyChunk) and isinstance(y, LazyChunk):
        return x.key == y.key  # a store's chunk key is the digest of its items
    a, b = read(x), read(y)
    return len(a) == len(b) and all(sends_same(i, j) for i, j in zip(a, b, strict=True))


def _inside(spans: Spans, position: int) -> bool:
    at = bisect_right(spans, (position, float("inf")))
    return at > 0 and spans[at - 1][0] <= position < spans[at - 1][1]


def _whole(spans: Spans, start: int, stop: int) -> bool:
    at = bisect_right(spans, (start, float("inf")))
    return at > 0 and spans[at - 1][0] <= start and stop <= spans[at - 1][1]


def _hidden(commit: ContextCommit) -> int:
    return sum(b - a for a, b in commit.hidden or ())


def _from_diff(diff: CommitDiff, limit: int) -> Delta:
    kinds = dict.fromkeys(ChangeKind, 0)
    for change in diff.changes:
        kinds[change.kind] += 1
    summary = any(
        c.kind is ChangeKind.ADDED and c.item.state is State.SUMMARY for c in diff.changes
    )
    return Delta(
        diff.prefix_end,
        diff.prefix_tokens,
        kinds[ChangeKind.ADDED],
        kinds[ChangeKind.TIGHTENED],
        kinds[ChangeKind.FOLDED],
        kinds[ChangeKind.REWRITTEN],
        diff.removed,
        summary,
        diff.changes[:limit],
    )


class _Walk:
    """One comparison: the two commits' chunks, what was read, the changes found."""

    def __init__(
        self, before: ContextCommit, after: ContextCommit, read: ReadChunk, limit: int
    ) -> None:
        self.before, self.after, self.read, self.limit = before, after, read, limit
        self.old, self.new = before.items.chunks(), after.items.chunks()
        self.near: dict[tuple[str | None, str], ContextItem] = {}
        self.near_read: set[int] = set()
        self.tail: dict[tuple[str | None, str], ContextItem] | None = None
        self.changes: list[ItemChange] = []
        self.counts = dict.fromkeys(ChangeKind, 0)
        self.summary_added = False

    def prefix(self) -> tuple[int, int]:
        """The first position that differs and the tokens before it."""
        old, new = self.old, self.new
        first = 0
        while first < min(len(old), len(new)) and _same(old[first], new[first], self.read):
            first += 1
        end = min(first * CHUNK, len(self.before.items), len(self.after.items))
        for number in range(first, min(len(old), len(new))):
            pairs = zip(self.read(old[number]), self.read(new[number]), strict=False)
            same = next((i for i, (a, b) in enumerate(pairs) if not sends_same(a, b)), None)
            if same is not None:
                end += same
                break
            end += min(len(old[number]), len(new[number]))
            if len(old[number]) != len(new[number]):
                break
        return end, self._tokens(end)

    def _tokens(self, end: int) -> int:
        # Summed over the shorter side: the chunks before ``end``, or the newer commit's after it.
        head = (end + CHUNK - 1) // CHUNK
        if head <= len(self.new) - end // CHUNK:
            return self._sum(0, end)
        return self.after.total_tokens - self._sum(end, len(self.after.items))

    def _sum(self, start: int, stop: int) -> int:
        total = 0
        for number in range(start // CHUNK, (stop + CHUNK - 1) // CHUNK):
            base = number * CHUNK
            items = self.read(self.new[number])
            total += sum(i.tokens for i in items[max(start - base, 0) : stop - base])
        return total

    def _lookup(self, item: ContextItem, number: int, position: int) -> ContextItem | None:
        for near in (number, number - 1, number + 1):
            if 0 <= near < len(self.old) and near not in self.near_read:
                self.near_read.add(near)
                for old in self.read(self.old[near]):
                    self.near.setdefault(_key(old), old)
        found = self.near.get(_key(item))
        if found is not None:
            return found
        if item.state is State.SUMMARY or position >= len(self.before.items):
            # A new summary, or an item past the older commit's end: nothing to look up.
            return None
        if self.tail is None:
            self.tail = {_key(old): old for old in self.before.items[self.start :]}
        return self.tail.get(_key(item))

    def walk(self, start: int) -> bool:
        """Count the changes from ``start`` on; False when only a whole diff can tell."""
        self.start = start
        spans: Spans = self.after.hidden or ()
        for number in range(start // CHUNK, len(self.new)):
            base = number * CHUNK
            chunk = self.new[number]
            if number < len(self.old) and _same(self.old[number], chunk, self.read):
                continue
            whole = _whole(spans, base, base + len(chunk))
            if whole and len(self.changes) >= self.limit:
                continue  # summarized, counted from the spans
            for offset, item in enumerate(self.read(chunk)):
                position = base + offset
                hidden = _inside(spans, position)
                if position < start or (hidden and len(self.changes) >= self.limit):
                    continue
                if not self._one(item, number, position, hidden=hidden):
                    return False
        return True

    def _one(self, item: ContextItem, number: int, position: int, *, hidden: bool) -> bool:
        old = self._lookup(item, number, position)
        if old is None:
            if hidden:
                return False  # a new summarized item (an attach): the spans cannot count it
            self.counts[ChangeKind.ADDED] += 1
            self.summary_added = self.summary_added or item.state is State.SUMMARY
            self._keep(ItemChange(position, ChangeKind.ADDED, item))
        elif not sends_same(old, item):
            kind = _kind(old, item)
            if not hidden:
                self.counts[kind] += 1
            self._keep(ItemChange(position, kind, item, old))
        return True

    def _keep(self, change: ItemChange) -> None:
        if len(self.changes) < self.limit:
            self.changes.append(change)


def delta(
    before: ContextCommit | None,
    after: ContextCommit,
    *,
    read: ReadChunk = plain,
    limit: int = 0,
) -> Delta:
    """The changes from ``before`` to ``after``: their counts, and the first ``limit`` of them.

    Reads the chunks that differ, not every item: a request that extends the previous one
    reads its new chunk. Equal to `diff_commits` (which this falls back to for attached or
    removed items, which the spans cannot count).
    """
    if before is None:
        first = after.items[:limit] if limit else ()
        changes = tuple(ItemChange(i, ChangeKind.ADDED, item) for i, item in enumerate(first))
        return Delta(0, 0, len(after.items), summary_added=after.summary_at >= 0, changes=changes)
    if before.attached != after.attached:
        return _from_diff(diff_commits(before, after), limit)
    walk = _Walk(before, after, read, limit)
    end, tokens = walk.prefix()
    if not walk.walk(end):
        return _from_diff(diff_commits(before, after), limit)
    counts = walk.counts
    folded = _hidden(after) - _hidden(before)
    added = counts[ChangeKind.ADDED]
    kept = len(after.items) - added
    removed = len(before.items) - kept
    if removed or folded < 0:
        return _from_diff(diff_commits(before, after), limit)
    return Delta(
        end,
        tokens,
        added,
        counts[ChangeKind.TIGHTENED],
        folded,
        counts[ChangeKind.REWRITTEN],
        0,
        walk.summary_added,
        tuple(walk.changes),
    )


def chunk_cache() -> tuple[ReadChunk, Callable[[], int]]:
    """A chunk reader that keeps what it read by chunk key, and a count of the items it read."""
    kept: dict[str, Chunk] = {}
    read_items = [0]

    def read(chunk: AnyChunk) -> Sequence[ContextItem]:
        if not isinstance(chunk, LazyChunk):
            return chunk
        found = kept.get(chunk.key)
        if found is None:
            if not chunk.loaded:
                read_items[0] += len(chunk)
            found = kept[chunk.key] = chunk.chunk()
        return found

    return read, lambda: read_items[0]
