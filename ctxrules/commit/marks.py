"""`Marks`: the rule bookmarks a commit carries, small and shared with its parent's."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import attrs


@attrs.frozen(eq=False)
class Marks(Mapping[str, int]):
    """A read-only map from a rule's mark key to its position, stored as two tuples.

    A commit's marks differ from its parent's in one or two positions each turn, while
    the keys stay the same: ``set`` shares the keys tuple, so a commit pays a few words
    for its bookmarks instead of a map of its own.

    >>> marks = Marks().set("aging", 3).set("idle", 5)
    >>> dict(marks.set("aging", 4)), marks.set("aging", 4).keys_ is marks.keys_
    ({'aging': 4, 'idle': 5}, True)
    >>> marks == {"idle": 5, "aging": 3}
    True
    """

    keys_: tuple[str, ...] = ()
    values_: tuple[int, ...] = ()

    def __getitem__(self, key: str) -> int:
        try:
            return self.values_[self.keys_.index(key)]
        except ValueError:
            raise KeyError(key) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys_)

    def __len__(self) -> int:
        return len(self.keys_)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Marks) and other.keys_ is self.keys_:
            return other.values_ == self.values_
        return isinstance(other, Mapping) and dict(self.items()) == dict(other.items())

    def __hash__(self) -> int:
        return hash(frozenset(zip(self.keys_, self.values_, strict=True)))

    def set(self, key: str, position: int) -> Marks:
        """The marks with ``key`` at ``position``; the keys are shared when ``key`` is known."""
        if key in self.keys_:
            at = self.keys_.index(key)
            values = (*self.values_[:at], position, *self.values_[at + 1 :])
            return Marks(self.keys_, values)
        return Marks((*self.keys_, key), (*self.values_, position))

    def update(self, other: Mapping[str, int]) -> Marks:
        """The marks with every key of ``other`` set to its position (like `PMap.update`)."""
        marks = self
        for key, position in other.items():
            marks = marks.set(key, position)
        return marks


EMPTY_MARKS = Marks()


def as_marks(value: Mapping[str, int]) -> Marks:
    """Any mapping of mark keys to positions as `Marks` (a `Marks` passes through)."""
    if isinstance(value, Marks):
        return value
    return Marks(tuple(value), tuple(value.values())) if value else EMPTY_MARKS
