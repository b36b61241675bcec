"""`ContextCommit`: the immutable, content-addressed snapshot of what the model reads."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs
from pyrsistent import PSet, pset

from ctxrules.canonical import content_hash
from ctxrules.commit.item import ContextItem, item_digest
from ctxrules.commit.layout import Spans, summarized_spans, visible_ranges, with_position
from ctxrules.commit.marks import EMPTY_MARKS, Marks, as_marks
from ctxrules.commit.state import State
from ctxrules.commit.vector import CHUNK, EMPTY_ITEMS, Chunk, ItemVector, as_item_vector

_MODULUS = 2**256


def position_term(index: int, item: ContextItem, digest: str | None = None) -> int:
    """One item's share of the items digest: its own digest (or ``digest``) bound to its position."""
    bound = f"{index}\x00{item.digest if digest is None else digest}"
    return int.from_bytes(hashlib.sha256(bound.encode()).digest(), "big")


def digests_digest(digests: Iterable[str]) -> int:
    """`items_digest` of items given by their digests alone, in order (a store's tree names them).

    >>> items = [ContextItem(f"n{i}", "user") for i in range(3)]
    >>> digests_digest(i.digest for i in items) == items_digest(items)
    True
    """
    sha = hashlib.sha256
    terms = (
        int.from_bytes(sha(f"{i}\x00{d}".encode()).digest(), "big") for i, d in enumerate(digests)
    )
    return sum(terms) % _MODULUS


def items_digest(
    items: Iterable[ContextItem], *, rehash: Callable[[int, ContextItem], bool] | None = None
) -> int:
    """The order-sensitive digest of a sequence of items, built from scratch (O(n)).

    Items for which ``rehash(position, item)`` holds are hashed afresh, not by their kept
    digest (a check that an item was not changed behind its class's back).
    """
    terms = (
        position_term(i, item, item_digest(item) if rehash and rehash(i, item) else None)
        for i, item in enumerate(items)
    )
    return sum(terms) % _MODULUS


def chunks_digest(
    chunks: Sequence[Sequence[ContextItem]],
    size: int,
    memo: dict[tuple[int, int], tuple[object, int]],
) -> int:
    """`items_digest` of the items of ``chunks`` (each ``size`` long but the last), chunk by chunk.

    ``memo`` keeps each chunk's share by (chunk number, chunk identity) for the next call:
    a reader of a session's commits, which share their chunks, hashes each chunk once.

    >>> items = [ContextItem(f"n{i}", "user") for i in range(5)]
    >>> chunks_digest([items[:4], items[4:]], 4, {}) == items_digest(items)
    True
    """
    total = 0
    for number, chunk in enumerate(chunks):
        key = (number, id(chunk))
        kept = memo.get(key)
        if kept is None or kept[0] is not chunk:
            start = number * size
            share = sum(position_term(start + i, item) for i, item in enumerate(chunk))
            # The chunk is kept with its share, so its id cannot be reused by another.
            kept = memo[key] = (chunk, share)
        total += kept[1]
    return total % _MODULUS


#: ``summary_at`` before it is derived from the items.
_UNKNOWN = -2
#: ``digest`` of a commit whose replaced items are not hashed yet (`ContextCommit.deferring_digest`).
_DEFERRED = -3


def _first_summary(items: Iterable[ContextItem]) -> int:
    """The position of the first summary item, or -1; O(n)."""
    return next((i for i, item in enumerate(items) if item.state is State.SUMMARY), -1)


@attrs.frozen
class ContextCommit:
    """What the model reads at one head: items in order, their total tokens, and a header.

    ``id`` is the SHA-256 of the canonical header plus the items digest: a sum over items
    of SHA-256(position, item digest), so appending or replacing k items costs O(k) and
    equal content gives an equal id on every machine. ``marks`` is rule bookkeeping: the
    position before which a rule has nothing left to do, so a turn visits only new items.
    ``attached`` holds the ids of the source commits expanded along this commit chain.

    Kept beside the content, derived from it and updated in O(changed items) like the
    digest: ``hidden``, the spans of summarized items (rendering steps over them);
    ``summary_at``, the position of the first summary item (-1 when there is none); and
    ``replaced``, the positions replaced since the commit began to be generated from its
    parent (None when unknown, as after `with_items`).
    """

    session_id: str
    parent_ids: tuple[str, ...] = ()
    created_at: float = 0.0
    head_node_id: str | None = None
    rules_version: str = ""
    # attrs.evolve re-runs converters; an ItemVector passes through, so evolve stays O(1).
    items: ItemVector = attrs.field(default=EMPTY_ITEMS, converter=as_item_vector)
    total_tokens: int = 0
    summary: str = ""
    marks: Marks = attrs.field(default=EMPTY_MARKS, converter=as_marks)
    attached: PSet[str] = attrs.field(factory=pset)
    digest: int = attrs.field(default=-1, eq=False, repr=False)
    hidden: Spans | None = attrs.field(default=None, eq=False, repr=False)
    summary_at: int = attrs.field(default=_UNKNOWN, eq=False, repr=False)
    replaced: tuple[int, ...] | None = attrs.field(default=None, eq=False, repr=False)
    #: While the digest is deferred: the commit whose digest is known, and ``replaced`` then.
    digest_base: ContextCommit | None = attrs.field(default=None, eq=False, repr=False)
    # The id once computed: a store asks for it several times a turn, each a SHA-256 of the
    # header with every rule's mark. A new commit (evolve too) starts without it.
    _id: str | None = attrs.field(default=None, init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        fresh = self.digest == -1
        if fresh:
            object.__setattr__(self, "digest", items_digest(self.items))
        if fresh or self.hidden is None:
            object.__setattr__(self, "hidden", summarized_spans(self.items))
        if fresh or self.summary_at == _UNKNOWN:
            object.__setattr__(self, "summary_at", _first_summary(self.items))

    @property
    def id(self) -> str:
        """Content address of the commit: ``c_`` plus 64 hex digits."""
        found = self._id
        if found is None:
            found = self._content_id()
            object.__setattr__(self, "_id", found)
        return found

    def _content_id(self) -> str:
        if self.digest == _DEFERRED:
            return self.with_digest().id
        return "c_" + content_hash(
            {
                "session_id": self.session_id,
                "parent_ids": list(self.parent_ids),
                "created_at": self.created_at,
                "head_node_id": self.head_node_id,
                "rules_version": self.rules_version,
                "total_tokens": self.total_tokens,
                "summary": self.summary,
                "marks": dict(self.marks),
                "attached": sorted(self.attached),
                "items": f"{self.digest:064x}",
            }
        )

    def append_items(self, new: Iterable[ContextItem]) -> ContextCommit:
        """The commit with ``new`` added at the end; total and digest updated in O(len(new))."""
        if self.digest == _DEFERRED:
            return self.with_digest().append_items(new)
        items, digest, total = self.items, self.digest, self.total_tokens
        hidden, summary_at = self.hidden or (), self.summary_at
        for item in new:
            position = len(items)
            digest = (digest + position_term(position, item)) % _MODULUS
            total += item.tokens
            items = items.append(item)
            if item.state is State.SUMMARIZED:
                hidden = with_position(hidden, position, hidden=True)
            elif item.state is State.SUMMARY and summary_at < 0:
                summary_at = position
        return attrs.evolve(
            self,
            items=items,
            digest=digest,
            total_tokens=total,
            hidden=hidden,
            summary_at=summary_at,
        )

    def replace_items(self, changes: Mapping[int, ContextItem]) -> ContextCommit:
        """The commit with the items at these positions replaced; O(len(changes)).

        >>> c = ContextCommit("s").append_items([ContextItem("a", "user", tokens=5)])
        >>> c.replace_items({0: ContextItem("a", "user", tokens=2)}).total_tokens
        2
        """
        if not changes:
            return self
        items = self.items
        digest, total = self.digest, self.total_tokens
        hidden, summary_at = self.hidden or (), self.summary_at
        left = -1
        deferred = digest == _DEFERRED
        for index, item in changes.items():
            old = self.items[index]
            if not deferred:
                digest = (
                    digest - position_term(index, old) + position_term(index, item)
                ) % _MODULUS
            total += item.tokens - old.tokens
            if (old.state is State.SUMMARIZED) is not (item.state is State.SUMMARIZED):
                hidden = with_position(hidden, index, hidden=item.state is State.SUMMARIZED)
            if item.state is State.SUMMARY and not 0 <= summary_at < index:
                summary_at = index
            elif index == summary_at and item.state is not State.SUMMARY:
                summary_at, left = _UNKNOWN, index  # the first summary left: find the next one
        new = items.set_many(changes)
        if summary_at == _UNKNOWN and left >= 0:
            # Nothing before it was a summary, and a summarized item is none: the next one
            # is looked for after it, past the summarized spans (a compaction folds the
            # summary near the start of a long history into the next).
            ranges = visible_ranges(hidden, len(new), left + 1)
            found = (i for i, item in new.positioned(ranges) if item.state is State.SUMMARY)
            summary_at = next(found, -1)
        replaced = None if self.replaced is None else self.replaced + tuple(changes)
        return attrs.evolve(
            self,
            items=new,
            digest=digest,
            total_tokens=total,
            hidden=hidden,
            summary_at=summary_at,
            replaced=replaced,
        )

    def with_items(self, items: Iterable[ContextItem]) -> ContextCommit:
        """The commit with a whole new item list (an insertion, a reorder); O(n).

        Rule marks are dropped, since positions may have moved: each rule rescans once.
        """
        new = ItemVector.of(items)
        return attrs.evolve(
            self,
            items=new,
            digest=items_digest(new),
            total_tokens=sum(i.tokens for i in new),
            digest_base=None,
            marks=EMPTY_MARKS,
            hidden=None,
            summary_at=_UNKNOWN,
            replaced=None,
        )

    def with_items_from(self, start: int, suffix: Iterable[ContextItem]) -> ContextCommit:
        """The commit with its items from ``start`` on replaced by ``suffix`` (an insertion there).

        What `with_items` gives for the same list, in O(items from ``start`` on): the items
        before ``start`` keep their positions, so their digest terms, chunks and spans are
        kept. A compaction inserts its summary near the end of a long history. Rule marks
        are dropped, as by `with_items`.

        >>> c = ContextCommit("s").with_items(ContextItem(str(i), "user") for i in range(200))
        >>> new = [ContextItem("x", "user"), *c.items[150:]]
        >>> c.with_items_from(150, new) == c.with_items([*c.items[:150], *new])
        True
        """
        if not 0 <= start <= len(self.items):
            msg = f"start {start} is outside the commit's {len(self.items)} items"
            raise IndexError(msg)
        if self.digest == _DEFERRED:
            return self.with_digest().with_items_from(start, suffix)
        old = self.items
        moved = list(old.positioned([range(start, len(old))]))
        new = tuple(suffix)
        digest, total = self.digest, self.total_tokens
        for index, item in moved:
            digest -= position_term(index, item)
            total -= item.tokens
        for offset, item in enumerate(new):
            digest += position_term(start + offset, item)
            total += item.tokens
        kept = start - start % CHUNK
        chunks = old.chunks()[: kept // CHUNK]
        rest = [*old[kept:start], *new]
        chunks += [Chunk(rest[at : at + CHUNK]) for at in range(0, len(rest), CHUNK)]
        kept_spans = [(a, min(b, start)) for a, b in self.hidden or () if a < start]
        new_spans = [(start + a, start + b) for a, b in summarized_spans(new)]
        if kept_spans and new_spans and kept_spans[-1][1] == new_spans[0][0]:
            kept_spans[-1] = (kept_spans[-1][0], new_spans.pop(0)[1])  # one run across start
        if 0 <= self.summary_at < start or self.summary_at == _UNKNOWN:
            summary_at = self.summary_at  # unknown: found from scratch, as by `with_items`
        else:
            found = _first_summary(new)
            summary_at = start + found if found >= 0 else -1
        return attrs.evolve(
            self,
            items=ItemVector.from_chunks(chunks),
            digest=digest % _MODULUS,
            total_tokens=total,
            marks=EMPTY_MARKS,
            hidden=(*kept_spans, *new_spans),
            summary_at=summary_at,
            replaced=None,
        )

    def deferring_digest(self) -> ContextCommit:
        """The commit with the digest of items it replaces left for later (`with_digest`).

        A trial run of the rules whose result may be dropped (a batch point weighed and not
        worth landing) then hashes none of the items it tightens. Everything that needs the
        digest (``id``, appending, an insertion) works it out first, in O(replaced items).
        """
        if self.replaced is None or self.digest == _DEFERRED:
            return self
        return attrs.evolve(self, digest=_DEFERRED, digest_base=self)

    def with_digest(self) -> ContextCommit:
        """The commit with its digest worked out (itself unless `deferring_digest` made it).

        >>> c = ContextCommit("s").append_items([ContextItem("a", "user", tokens=5)]).begin_generation()
        >>> trial = c.deferring_digest().replace_items({0: ContextItem("a", "user", tokens=2)})
        >>> trial.with_digest().digest == c.replace_items({0: ContextItem("a", "user", tokens=2)}).digest
        True
        """
        base = self.digest_base
        if self.digest != _DEFERRED or base is None:
            return self
        assert base.replaced is not None  # noqa: S101 - deferring_digest requires it
        assert self.replaced is not None  # noqa: S101 - only replace_items keeps a digest deferred
        digest = base.digest
        for index in set(self.replaced[len(base.replaced) :]):
            old, new = base.items[index], self.items[index]
            if new is not old:
                digest += position_term(index, new) - position_term(index, old)
        return attrs.evolve(self, digest=digest % _MODULUS, digest_base=None)

    def begin_generation(self) -> ContextCommit:
        """The commit as the base of a child, with ``replaced`` empty.

        The child's changes can then be read in O(changed items), not by comparing items.
        """
        return self if self.replaced == () else attrs.evolve(self, replaced=())

    def with_mark(self, key: str, position: int) -> ContextCommit:
        """The commit recording that rule ``key`` has nothing left to do before ``position``."""
        if self.marks.get(key) == position:
            return self
        return attrs.evolve(self, marks=self.marks.set(key, position))

    def index_of(self, source_node_id: str) -> int | None:
        """Position of the first item for this node, by a linear scan (for tests and tools)."""
        return next(
            (i for i, item in enumerate(self.items) if item.source_node_id == source_node_id), None
        )

    def next_turn(self) -> int:
        """The assistant-turn index the next new item starts in."""
        if not self.items:
            return 0
        last = self.items[-1]
        return last.turn + 1 if last.role.value in ("assistant", "tool") else last.turn
