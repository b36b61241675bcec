"""`ItemVector`: a commit's items, persistent, in chunks the cyclic GC need not walk again."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain, islice
from typing import TYPE_CHECKING, overload

from immutables import Map

if TYPE_CHECKING:
    from ctxrules.commit.item import ContextItem

#: Items per chunk: a change copies one chunk, a young chunk costs the GC this many visits.
CHUNK = 64
_SHIFT = 6


# A tuple subclass cannot have non-empty slots: ``memo`` lives in the instance dict.
class Chunk(tuple["ContextItem", ...]):  # noqa: SLOT001
    """Up to `CHUNK` items, immutable, with a memo of what is derived from exactly them.

    A chunk is never changed, only replaced, so what a renderer derives from its items (their
    messages, one run) can stay with it and be reused by every later version that shares it.
    """

    @property
    def memo(self) -> dict[str, object]:
        """The derived values kept with this chunk (a cache: equal chunks derive equal values)."""
        return self.__dict__

    def __reduce__(self) -> tuple[type[Chunk], tuple[tuple[ContextItem, ...]]]:
        # The memo is a cache: pickles carry the items only.
        return Chunk, (tuple(self),)


_Chunk = Chunk


class ItemVector(Sequence["ContextItem"]):
    """An immutable sequence of items: full `CHUNK`-item tuples in a HAMT, and the last apart.

    A replacement makes one new chunk and a few small HAMT nodes; an append makes only a new
    last chunk (the HAMT changes when a chunk fills), so each commit of a session holds one
    chunk of its own; every other chunk is shared with the old version. A flat persistent
    vector is one object whose GC traversal visits every item, and a turn makes new ones:
    the cyclic GC would walk the whole history each time it met one young. Here it meets
    small objects.

    >>> v = ItemVector.of(range(3)).append(3)  # type: ignore[arg-type]
    >>> list(v.set(0, 9)), len(v), v[-1]
    ([9, 1, 2, 3], 4, 3)
    """

    __slots__ = ("_chunks", "_length", "_tail")

    def __init__(
        self, chunks: Map[int, _Chunk] | None = None, length: int = 0, tail: _Chunk | None = None
    ) -> None:
        # ``chunks`` holds the full chunks, ``tail`` the items after them (fewer than CHUNK).
        self._chunks: Map[int, _Chunk] = chunks if chunks is not None else Map()
        self._length = length
        self._tail: _Chunk = tail if tail is not None else _NO_ITEMS

    @classmethod
    def of(cls, items: Iterable[ContextItem]) -> ItemVector:
        """The items as a vector (an `ItemVector` is returned as it is)."""
        if isinstance(items, ItemVector):
            return items
        flat = tuple(items)
        full = len(flat) >> _SHIFT << _SHIFT
        chunks = Map(
            {n: Chunk(flat[start : start + CHUNK]) for n, start in enumerate(range(0, full, CHUNK))}
        )
        return cls(chunks, len(flat), Chunk(flat[full:]))

    def _chunk(self, number: int) -> _Chunk:
        """The chunk holding positions ``number * CHUNK`` on (the tail after the full ones)."""
        return self._tail if number == self._length >> _SHIFT else self._chunks[number]

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> ContextItem: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[ContextItem, ...]: ...

    def __getitem__(self, index: int | slice) -> ContextItem | tuple[ContextItem, ...]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._length)
            if step != 1:
                return tuple(self)[index]
            return tuple(self._between(start, stop))
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            msg = "ItemVector index out of range"
            raise IndexError(msg)
        return self._chunk(index >> _SHIFT)[index & (CHUNK - 1)]

    def _between(self, start: int, stop: int) -> Iterator[ContextItem]:
        """The items from ``start`` to ``stop``, chunk by chunk."""
        if start >= stop:
            return iter(())
        first, last = start >> _SHIFT, (stop - 1) >> _SHIFT
        chunks = (self._chunk(n) for n in range(first, last + 1))
        return islice(
            chain.from_iterable(chunks), start - (first << _SHIFT), stop - (first << _SHIFT)
        )

    def __iter__(self) -> Iterator[ContextItem]:
        return self._between(0, self._length)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ItemVector):
            return self._length == other._length and all(
                a is b or a == b
                for a, b in zip(self._chunk_list(), other._chunk_list(), strict=True)
            )
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == self._length and all(
                a is b or a == b for a, b in zip(self, other, strict=True)
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self._chunk_list()))

    def __repr__(self) -> str:
        return f"ItemVector({list(self)!r})"

    def __reduce__(self) -> tuple[object, tuple[tuple[ContextItem, ...]]]:
        return _rebuilt, (tuple(self),)

    def runs(self, start: int, stop: int) -> Iterator[tuple[Chunk, int, int]]:
        """The chunks holding positions ``start`` to ``stop``, each with the offsets used in it.

        >>> [(len(c), lo, hi) for c, lo, hi in ItemVector.of(range(150)).runs(10, 140)]  # type: ignore[arg-type]
        [(64, 10, 64), (64, 0, 64), (22, 0, 12)]
        """
        if start >= stop:
            return
        for number in range(start >> _SHIFT, ((stop - 1) >> _SHIFT) + 1):
            base = number << _SHIFT
            yield self._chunk(number), max(start - base, 0), min(stop - base, CHUNK)

    def _chunk_list(self) -> list[_Chunk]:
        full = [self._chunks[n] for n in range(len(self._chunks))]
        return [*full, self._tail] if self._tail else full

    def chunks(self) -> list[Chunk]:
        """The chunks in order: every one full but the last (what a store keeps apart)."""
        return self._chunk_list()

    @classmethod
    def from_chunks(cls, chunks: Sequence[Chunk]) -> ItemVector:
        """The vector of these chunks, shared as they are; each full but the last.

        >>> v = ItemVector.of(range(70))  # type: ignore[arg-type]
        >>> ItemVector.from_chunks(v.chunks()) == v
        True
        """
        if any(len(chunk) != CHUNK for chunk in chunks[:-1]):
            msg = f"every chunk but the last must hold {CHUNK} items"
            raise ValueError(msg)
        length = sum(len(chunk) for chunk in chunks)
        if chunks and len(chunks[-1]) < CHUNK:
            return cls(Map(enumerate(chunks[:-1])), length, chunks[-1])
        return cls(Map(enumerate(chunks)), length)

    def append(self, item: ContextItem) -> ItemVector:
        """The vector with ``item`` at the end: one chunk copied."""
        grown = Chunk((*self._tail, item))
        if len(grown) < CHUNK:
            return ItemVector(self._chunks, self._length + 1, grown)
        return ItemVector(self._chunks.set(self._length >> _SHIFT, grown), self._length + 1)

    def extend(self, items: Iterable[ContextItem]) -> ItemVector:
        """The vector with ``items`` at the end."""
        vector = self
        for item in items:
            vector = vector.append(item)
        return vector

    def set(self, index: int, item: ContextItem) -> ItemVector:
        """The vector with ``item`` at ``index``: one chunk copied."""
        return self.set_many({index: item})

    def set_many(self, changes: Mapping[int, ContextItem]) -> ItemVector:
        """The vector with each position of ``changes`` replaced; each touched chunk copied once."""
        if not changes:
            return self
        by_chunk: dict[int, list[tuple[int, ContextItem]]] = {}
        for index, item in changes.items():
            position = index + self._length if index < 0 else index
            if not 0 <= position < self._length:
                msg = "ItemVector index out of range"
                raise IndexError(msg)
            by_chunk.setdefault(position >> _SHIFT, []).append((position & (CHUNK - 1), item))
        chunks, tail = self._chunks.mutate(), self._tail
        for number, replaced in by_chunk.items():
            chunk = list(self._chunk(number))
            for offset, item in replaced:
                chunk[offset] = item
            if number == self._length >> _SHIFT:
                tail = Chunk(chunk)
            else:
                chunks.set(number, Chunk(chunk))
        return ItemVector(chunks.finish(), self._length, tail)


_NO_ITEMS = Chunk()


def _rebuilt(items: tuple[ContextItem, ...]) -> ItemVector:
    return ItemVector.of(items)


EMPTY_ITEMS = ItemVector()


def as_item_vector(items: Iterable[ContextItem] | Sequence[ContextItem]) -> ItemVector:
    """Any iterable of items as an `ItemVector` (one passes through, so evolve stays O(1))."""
    return items if isinstance(items, ItemVector) else ItemVector.of(items)
