"""`IdVector`: node ids in seq order, persistent, in chunks the cyclic GC need not walk again."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice
from typing import overload

from immutables import Map
from pyrsistent import PVector, pvector

from ctxrules.dag.layered import LayeredIds

#: Ids per chunk: an append copies the open chunk, at most this many references.
CHUNK = 64
_SHIFT = 6
_NO_CHUNKS: Map[int, tuple[str, ...]] = Map()


class IdVector(Sequence[str]):
    """An immutable sequence of ids: full tuples of `CHUNK` in a HAMT, and the open tail.

    A flat persistent vector is one object whose GC traversal visits every id, and each
    append makes a new one that starts young. Here an append makes one tuple of at most
    `CHUNK` ids (and, once a chunk fills, a few small HAMT nodes); the full chunks are
    shared by every later version and never young again.

    >>> v = IdVector.of(f"n{i}" for i in range(70)).append("x")
    >>> len(v), v[0], v[-1], v[68:], list(reversed(v))[:2]
    (71, 'n0', 'x', pvector(['n68', 'n69', 'x']), ['x', 'n69'])
    """

    __slots__ = ("_full", "_length", "_tail")

    def __init__(
        self, full: Map[int, tuple[str, ...]] = _NO_CHUNKS, tail: tuple[str, ...] = ()
    ) -> None:
        self._full = full
        self._tail = tail
        self._length = (len(full) << _SHIFT) + len(tail)

    @classmethod
    def of(cls, ids: Iterable[str]) -> IdVector:
        """The ids as a vector, chunked in one pass."""
        flat = tuple(ids)
        cut = len(flat) - len(flat) % CHUNK
        full = Map({n: flat[start : start + CHUNK] for n, start in enumerate(range(0, cut, CHUNK))})
        return cls(full, flat[cut:])

    def append(self, node_id: str) -> IdVector:
        """The vector with ``node_id`` at the end."""
        tail = (*self._tail, node_id)
        if len(tail) < CHUNK:
            return IdVector(self._full, tail)
        return IdVector(self._full.set(len(self._full), tail), ())

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> PVector[str]: ...

    def __getitem__(self, index: int | slice) -> str | PVector[str]:
        if isinstance(index, slice):
            # A slice is a pyrsistent vector, as the graph's order was: it compares equal
            # to the other id lists a graph gives (``children_of``, ``callees_of``).
            start, stop, step = index.indices(self._length)
            if step != 1:
                return pvector(tuple(self)[index])
            return pvector(self._between(start, stop))
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            msg = "IdVector index out of range"
            raise IndexError(msg)
        number = index >> _SHIFT
        chunk = self._tail if number == len(self._full) else self._full[number]
        return chunk[index & (CHUNK - 1)]

    def _chunks(self, first: int = 0) -> Iterator[tuple[str, ...]]:
        full = self._full
        yield from (full[n] for n in range(first, len(full)))
        yield self._tail

    def _between(self, start: int, stop: int) -> Iterator[str]:
        if start >= stop:
            return iter(())
        first = start >> _SHIFT
        skip = start - (first << _SHIFT)
        return islice(chain.from_iterable(self._chunks(first)), skip, skip + stop - start)

    def __iter__(self) -> Iterator[str]:
        return chain.from_iterable(self._chunks())

    def __reversed__(self) -> Iterator[str]:
        full = self._full
        yield from reversed(self._tail)
        for number in range(len(full) - 1, -1, -1):
            yield from reversed(full[number])

    def __contains__(self, value: object) -> bool:
        return any(value in chunk for chunk in self._chunks())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, IdVector):
            return (
                self._length == other._length
                and self._tail == other._tail
                and all(
                    a is b or a == b for a, b in zip(self._chunks(), other._chunks(), strict=True)
                )
            )
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == self._length and all(
                a == b for a, b in zip(self, other, strict=True)
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"IdVector({list(self)!r})"

    def __reduce__(self) -> tuple[object, tuple[tuple[str, ...]]]:
        return IdVector.of, (tuple(self),)


EMPTY_IDS = IdVector()


def id_vector(ids: Sequence[str] | Iterable[str]) -> IdVector | LayeredIds:
    """Any iterable of ids as an `IdVector` (one, or a `LayeredIds`, passes through as it is)."""
    return ids if isinstance(ids, IdVector | LayeredIds) else IdVector.of(ids)
