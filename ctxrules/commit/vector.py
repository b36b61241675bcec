"""`ItemVector`: a commit's items, persistent, in chunks the cyclic GC need not walk again."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, islice
from typing import TYPE_CHECKING, overload

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


class LazyChunk(Sequence["ContextItem"]):
    """A chunk not read yet: its length, what it is read by, and the source that reads it.

    A store passes one in for each chunk of a commit it reads back, so a resumed session
    reads only the chunks a turn touches. The first access reads the chunk once; every
    vector sharing this placeholder shares what was read (a cache: the source gives back
    exactly the chunk that was written, or raises).
    """

    __slots__ = ("_chunk", "_load", "key", "size")

    def __init__(self, key: str, size: int, load: Callable[[], Chunk]) -> None:
        self.key, self.size, self._load = key, size, load
        self._chunk: Chunk | None = None

    def chunk(self) -> Chunk:
        """The chunk, read from the source on the first call."""
        if self._chunk is None:
            chunk = self._load()
            if len(chunk) != self.size:
                msg = f"chunk {self.key[:12]} holds {len(chunk)} items, expected {self.size}"
                raise ValueError(msg)
            self._chunk = chunk
        return self._chunk

    @property
    def loaded(self) -> bool:
        """Whether the chunk has been read."""
        return self._chunk is not None

    def prime(self, chunk: Chunk) -> None:
        """Keep ``chunk``, read by the caller, as if the source had read it (a read under way)."""
        if len(chunk) != self.size:
            msg = f"chunk {self.key[:12]} holds {len(chunk)} items, expected {self.size}"
            raise ValueError(msg)
        if self._chunk is None:
            self._chunk = chunk

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, index: int) -> ContextItem: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[ContextItem, ...]: ...

    def __getitem__(self, index: int | slice) -> ContextItem | tuple[ContextItem, ...]:
        return self.chunk()[index]

    def __iter__(self) -> Iterator[ContextItem]:
        return iter(self.chunk())

    def __repr__(self) -> str:
        return f"LazyChunk({self.key[:12]!r}, {self.size}, loaded={self.loaded})"


#: What an `ItemVector` keeps per chunk number: a chunk, or a placeholder read when touched.
AnyChunk = Chunk | LazyChunk


def _read(chunk: AnyChunk) -> Chunk:
    return chunk if type(chunk) is _Chunk else chunk.chunk()  # type: ignore[union-attr]


#: Children per node of the trie over chunks: a new version copies one node per level.
_FAN = 32
_FAN_SHIFT = 5
#: The shifts that lead from the root to a chunk, by the trie's depth.
_SHIFTS = tuple(tuple(range(_FAN_SHIFT * (depth - 1), -1, -_FAN_SHIFT)) for depth in range(16))


def _trie(chunks: Sequence[AnyChunk]) -> tuple[tuple[object, ...], int]:
    """The root and depth of a trie over these chunks, every node full but the rightmost."""
    nodes: Sequence[object] = chunks
    depth = 1
    while len(nodes) > _FAN:
        nodes = [tuple(nodes[at : at + _FAN]) for at in range(0, len(nodes), _FAN)]
        depth += 1
    return tuple(nodes), depth


def _with(node: tuple[object, ...], at: int, child: object) -> tuple[object, ...]:
    """``node`` with ``child`` at ``at`` (one past its end: appended)."""
    if at == len(node):
        return node + (child,)  # noqa: RUF005 - twice as fast as unpacking
    copy = list(node)
    copy[at] = child
    return tuple(copy)


def _placed(
    node: tuple[object, ...], depth: int, number: int, chunk: AnyChunk
) -> tuple[object, ...]:
    """``node`` (at ``depth``) with ``chunk`` at chunk ``number``: a new one at its end, or a replacement."""
    at = (number >> (_FAN_SHIFT * (depth - 1))) & (_FAN - 1)
    if depth == 1:
        return _with(node, at, chunk)
    child = node[at] if at < len(node) else ()
    if depth == 2:
        return _with(node, at, _with(child, number & (_FAN - 1), chunk))  # type: ignore[arg-type]
    return _with(node, at, _placed(child, depth - 1, number, chunk))  # type: ignore[arg-type]


def _differing(
    mine: Sequence[object], theirs: Sequence[object], level: int, first: int
) -> int | None:
    """The first position where two nodes at ``level`` (1: they hold chunks) differ, or None.

    A child both share (the same object) is passed over unread, so two versions that
    differ in one chunk are compared in a few dozen steps at any length.
    """
    span = CHUNK << (_FAN_SHIFT * (level - 1))
    for number, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        if a is b:
            continue
        base = first + number * span
        if level > 1:
            found = _differing(a, b, level - 1, base)  # type: ignore[arg-type]
            if found is not None:
                return found
            continue
        items, others = _read(a), _read(b)  # type: ignore[arg-type]
        for offset, (item, that) in enumerate(zip(items, others, strict=False)):
            if item is not that and item != that:
                return base + offset
        if len(items) != len(others):
            return base + min(len(items), len(others))
    return None


class ItemVector(Sequence["ContextItem"]):
    """An immutable sequence of items: tuples of `CHUNK` items in a trie of small nodes.

    A new version (an append, a replacement) makes one new chunk and one node of at most
    32 children per level of the trie (three at 100k items); every other chunk and node is
    shared with the old version. A flat persistent vector is one object whose GC traversal
    visits every item, and a turn makes new ones: the cyclic GC would walk the whole history
    each time it met one young. Here it meets small objects. Two versions are compared
    node by node, passing over what they share.

    >>> v = ItemVector.of(range(3)).append(3)  # type: ignore[arg-type]
    >>> list(v.set(0, 9)), len(v), v[-1]
    ([9, 1, 2, 3], 4, 3)
    """

    __slots__ = ("_depth", "_length", "_root")

    def __init__(self, root: tuple[object, ...] = (), length: int = 0, depth: int = 1) -> None:
        self._root, self._length, self._depth = root, length, depth

    @classmethod
    def of(cls, items: Iterable[ContextItem]) -> ItemVector:
        """The items as a vector (an `ItemVector` is returned as it is)."""
        if isinstance(items, ItemVector):
            return items
        flat = tuple(items)
        root, depth = _trie([Chunk(flat[at : at + CHUNK]) for at in range(0, len(flat), CHUNK)])
        return cls(root, len(flat), depth)

    def __len__(self) -> int:
        return self._length

    def _chunk(self, number: int) -> AnyChunk:
        node: object = self._root
        depth = self._depth
        # The usual depths unrolled: every item lookup takes this path.
        if depth == 1:
            return node[number]  # type: ignore[index, no-any-return]
        if depth == 2:
            return node[number >> _FAN_SHIFT][number & (_FAN - 1)]  # type: ignore[index, no-any-return]
        for shift in _SHIFTS[depth]:
            node = node[(number >> shift) & (_FAN - 1)]  # type: ignore[index]
        return node  # type: ignore[return-value]

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
        return _read(self._chunk(index >> _SHIFT))[index & (CHUNK - 1)]

    def _numbered(self, first: int, last: int) -> Iterator[AnyChunk]:
        """The chunks numbered ``first`` to ``last`` (inclusive), in order."""
        if last - first < 4:
            return (self._chunk(number) for number in range(first, last + 1))
        return islice(self._walk(), first, last + 1)

    def _walk(self) -> Iterator[AnyChunk]:
        nodes: Iterable[object] = self._root
        for _ in range(self._depth - 1):
            nodes = chain.from_iterable(nodes)  # type: ignore[arg-type]
        return iter(nodes)  # type: ignore[arg-type]

    def _between(self, start: int, stop: int) -> Iterator[ContextItem]:
        """The items from ``start`` to ``stop``, chunk by chunk."""
        if start >= stop:
            return iter(())
        first, last = start >> _SHIFT, (stop - 1) >> _SHIFT
        chunks = map(_read, self._numbered(first, last))
        return islice(
            chain.from_iterable(chunks), start - (first << _SHIFT), stop - (first << _SHIFT)
        )

    def __iter__(self) -> Iterator[ContextItem]:
        return self._between(0, self._length)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ItemVector):
            return self._length == other._length and self.first_difference(other) is None
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
        first, last = start >> _SHIFT, (stop - 1) >> _SHIFT
        if last - first < 4:
            # `_numbered` inlined for the short case: the rules call this many times a
            # turn, and the generator through it costs 0.8 µs more a call.
            for number in range(first, last + 1):
                base = number << _SHIFT
                yield _read(self._chunk(number)), max(start - base, 0), min(stop - base, CHUNK)
            return
        for number, chunk in enumerate(self._numbered(first, last), first):
            base = number << _SHIFT
            yield _read(chunk), max(start - base, 0), min(stop - base, CHUNK)

    def _chunk_list(self) -> list[_Chunk]:
        return list(map(_read, self._walk()))

    def chunks(self) -> list[AnyChunk]:
        """The chunks in order, each full but the last (what a store keeps apart); unread ones as they are."""
        return list(self._walk())

    def first_difference(self, other: ItemVector) -> int | None:
        """The first position where ``other`` differs from this vector (None: equal).

        A chunk or node both share (the same object, read or not) is passed over unread:
        two versions of one session differ in a few chunks, and the rest of a resumed one
        would otherwise be read from the store to be compared.

        >>> a = ItemVector.of(range(200))  # type: ignore[arg-type]
        >>> a.first_difference(a.set(130, -1)), a.first_difference(a), a.first_difference(a.append(0))  # type: ignore[arg-type]
        (130, None, 200)
        """
        mine, theirs = self._root, other._root
        # The shallower root, lifted to the other's depth: the same trie with one child.
        for _ in range(self._depth, other._depth):
            mine = (mine,)
        for _ in range(other._depth, self._depth):
            theirs = (theirs,)
        found = _differing(mine, theirs, max(self._depth, other._depth), 0)
        if found is None and self._length != other._length:
            return min(self._length, other._length)
        return found

    @classmethod
    def from_chunks(cls, chunks: Sequence[AnyChunk]) -> ItemVector:
        """The vector of these chunks (or placeholders), shared as they are; each full but the last.

        >>> v = ItemVector.of(range(70))  # type: ignore[arg-type]
        >>> ItemVector.from_chunks(v.chunks()) == v
        True
        """
        if any(len(chunk) != CHUNK for chunk in chunks[:-1]):
            msg = f"every chunk but the last must hold {CHUNK} items"
            raise ValueError(msg)
        root, depth = _trie(chunks)
        return cls(root, sum(len(chunk) for chunk in chunks), depth)

    def positioned(self, ranges: Iterable[range]) -> Iterator[tuple[int, ContextItem]]:
        """Each item of these ranges (ascending) with its position, read chunk by chunk.

        >>> list(ItemVector.of("abcdef").positioned([range(1, 3), range(4, 5)]))  # type: ignore[arg-type]
        [(1, 'b'), (2, 'c'), (4, 'e')]
        """
        for run in ranges:
            index = run.start
            # Chunk by chunk: indexing the vector item by item looks up the chunk for each.
            for chunk, first, last in self.runs(run.start, run.stop):
                for item in chunk[first:last]:
                    yield index, item
                    index += 1

    def append(self, item: ContextItem) -> ItemVector:
        """The vector with ``item`` at the end: one chunk and a node per level copied."""
        number = self._length >> _SHIFT
        root, depth = self._root, self._depth
        if self._length & (CHUNK - 1):
            chunk = Chunk((*_read(self._chunk(number)), item))
        else:
            chunk = Chunk((item,))
            if number == _FAN**depth:
                root, depth = (root,), depth + 1
        return ItemVector(_placed(root, depth, number, chunk), self._length + 1, depth)

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
        root = self._root
        for number, replaced in by_chunk.items():
            chunk = list(_read(self._chunk(number)))
            for offset, item in replaced:
                chunk[offset] = item
            root = _placed(root, self._depth, number, Chunk(chunk))
        return ItemVector(root, self._length, self._depth)


def _rebuilt(items: tuple[ContextItem, ...]) -> ItemVector:
    return ItemVector.of(items)


EMPTY_ITEMS = ItemVector()


def as_item_vector(items: Iterable[ContextItem] | Sequence[ContextItem]) -> ItemVector:
    """Any iterable of items as an `ItemVector` (one passes through, so evolve stays O(1))."""
    return items if isinstance(items, ItemVector) else ItemVector.of(items)
