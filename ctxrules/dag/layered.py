"""`Layered`: a persistent map over a read-only source, for a graph whose stored part is read on demand.

A store that resumes a long session passes in how to read one key of what it holds (a
node by id, the children of a node); the map reads a key when it is first asked for and
keeps what is set afterwards in an `immutables.Map` on top. The core never does I/O
itself: the reads are the source's, as a summarizer's calls are the summarizer's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple, TypeVar, overload

from immutables import Map

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")
_MISSING: object = object()


class Layered(Mapping[K, V]):
    """A map whose keys not set on top are read from a source: ``read(key)`` gives the value or None.

    ``keys`` lists the source's keys (read only when the whole map is walked). Each
    `set` returns a new map sharing everything with this one, as `immutables.Map` does.

    >>> m = Layered({"a": 1}.get, lambda: ["a"]).set("b", 2)
    >>> m["a"], m.get("b"), "c" in m, sorted(m), len(m)
    (1, 2, False, ['a', 'b'], 2)
    """

    __slots__ = ("_keys", "_over", "_read", "_size")

    def __init__(
        self,
        read: Callable[[K], V | None],
        keys: Callable[[], Iterable[K]],
        over: Map[K, V] | None = None,
        size: int | None = None,
    ) -> None:
        self._read, self._keys = read, keys
        self._over: Map[K, V] = over if over is not None else Map()
        self._size = size

    def __getitem__(self, key: K) -> V:
        value = self._over.get(key, _MISSING)
        if value is _MISSING:
            value = self._read(key)
            if value is None:
                raise KeyError(key)
        return value  # type: ignore[return-value]

    @overload
    def get(self, key: K, /) -> V | None: ...

    @overload
    def get(self, key: K, default: V | D, /) -> V | D: ...

    def get(self, key: K, default: object = None) -> object:
        """The value of ``key``, read from the source if it was not set on top; else ``default``."""
        value = self._over.get(key, _MISSING)
        if value is _MISSING:
            value = self._read(key)
        return default if value is None else value

    def __contains__(self, key: object) -> bool:
        return key in self._over or self._read(key) is not None  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[K]:
        below = list(self._keys())
        yield from below
        seen = set(below)
        yield from (key for key in self._over if key not in seen)

    def __len__(self) -> int:
        if self._size is None:
            self._size = sum(1 for _ in self)
        return self._size

    def __hash__(self) -> int:
        return hash(frozenset(self.items()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return len(self) == len(other) and dict(self.items()) == dict(other.items())

    def __repr__(self) -> str:
        return f"Layered(over={len(self._over)} keys)"

    def set(self, key: K, value: V) -> Layered[K, V]:
        """The map with ``key`` set to ``value`` on top."""
        size = self._size
        if size is not None and key not in self:
            size += 1
        return Layered(self._read, self._keys, self._over.set(key, value), size)


class Outline(NamedTuple):
    """A stored node without its texts: what a walk over edges and metadata reads."""

    id: str
    predecessor: str | None
    caller: str | None
    status: str
    metadata: Mapping[str, object]


class LayeredIds(Sequence[str]):
    """Ids in seq order: the first ``size`` read from a source when first walked, then appended ones.

    `len` and appends never read the source, so a resumed graph grows without reading it.

    >>> ids = LayeredIds(2, lambda: ["a", "b"]).append("c")
    >>> len(ids), ids[-1], list(ids), ids[1:]
    (3, 'c', ['a', 'b', 'c'], ('b', 'c'))
    """

    __slots__ = ("_below", "_load", "_own", "_size", "handle_owners", "outline")

    def __init__(
        self,
        size: int,
        load: Callable[[], Sequence[str]],
        own: tuple[str, ...] = (),
        *,
        handle_owners: Callable[[str], Sequence[str] | None] | None = None,
        outline: Callable[[], Sequence[Outline]] | None = None,
    ) -> None:
        self._size, self._load, self._own = size, load, own
        self._below: list[Sequence[str]] = []
        #: The source's answer to "which of the first ``stored`` ids have this recall
        #: handle" (None when it cannot tell), so a recall need not hash every stored id.
        self.handle_owners = handle_owners
        #: The first ``stored`` nodes' outlines in seq order, read in one pass without their
        #: texts (None: the source cannot): a walk over edges and metadata reads no record.
        self.outline = outline

    @property
    def stored(self) -> int:
        """How many ids come from the source (the rest were appended)."""
        return self._size

    def _base(self) -> Sequence[str]:
        if not self._below:
            ids = self._load()
            if len(ids) != self._size:
                msg = f"the source holds {len(ids)} ids, expected {self._size}"
                raise ValueError(msg)
            self._below.append(ids)
        return self._below[0]

    def __len__(self) -> int:
        return self._size + len(self._own)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        if index < 0:
            index += len(self)
        if index >= self._size:
            return self._own[index - self._size]
        if index < 0:
            raise IndexError(index)
        return self._base()[index]

    def __iter__(self) -> Iterator[str]:
        if self._size:
            yield from self._base()
        yield from self._own

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"LayeredIds({self._size} stored, {len(self._own)} new)"

    def append(self, node_id: str) -> LayeredIds:
        """The ids with ``node_id`` at the end (the stored ones shared, not read)."""
        grown = LayeredIds(
            self._size,
            self._load,
            (*self._own, node_id),
            handle_owners=self.handle_owners,
            outline=self.outline,
        )
        grown._below = self._below
        return grown
