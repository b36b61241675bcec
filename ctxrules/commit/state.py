"""Item states, ordered by tightness: full < aged < cleared < summarized."""

from __future__ import annotations

import enum


class State(enum.StrEnum):
    """How much of an item the model sees; a rule may only move an item to a tighter state.

    ``SUMMARY`` marks a synthetic summary item; it can only become ``SUMMARIZED``, when a
    newer summary replaces it.
    """

    FULL = "full"
    AGED = "aged"
    CLEARED = "cleared"
    SUMMARIZED = "summarized"
    SUMMARY = "summary"

    @property
    def tightness(self) -> int:
        """Rank in the tightening order; a summary ranks with full (it is shown whole).

        >>> State.FULL.tightness < State.AGED.tightness < State.CLEARED.tightness
        True
        """
        return _TIGHTNESS[self]

    def may_become(self, other: State) -> bool:
        """Whether moving from this state to ``other`` keeps the order (never loosens).

        >>> State.AGED.may_become(State.CLEARED), State.CLEARED.may_become(State.AGED)
        (True, False)
        >>> State.SUMMARY.may_become(State.SUMMARIZED), State.FULL.may_become(State.SUMMARY)
        (True, False)
        """
        if self is State.SUMMARY or other is State.SUMMARY:
            return other is self or other is State.SUMMARIZED
        return other.tightness >= self.tightness


_TIGHTNESS = {
    State.FULL: 0,
    State.SUMMARY: 0,
    State.AGED: 1,
    State.CLEARED: 2,
    State.SUMMARIZED: 3,
}
