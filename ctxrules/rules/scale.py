"""Sizes for a small window: a rule's character sizes shrink with the window's input budget.

A spec's sizes (a 4,000-character cap, 40-character stub heads, a tail window of three
turns) are chosen for a window of a given size; at a window a few times smaller, one capped
result would take a large share of the input. A rule given ``scale_below`` keeps its sizes
from that input budget up and, below it, multiplies them by the budget's share of it.
"""

from __future__ import annotations

import math

from ctxrules.rules.facts import Facts
from ctxrules.tokens.budget import input_budget_for

__all__ = ["scaled", "scaled_turns", "window_scale"]


def window_scale(facts: Facts, scale_below: int) -> float:
    """The window's input budget as a share of ``scale_below``, at most 1 (1 when it is 0: off).

    The budget is the window's (less its default output reserve), not a compaction's or a
    refusal's: the sizes stay the same across a session's turns.

    >>> [window_scale(Facts(context_window=w), 16_000) for w in (8_000, 16_000, 32_000, 200_000)]
    [0.25, 0.5, 1.0, 1.0]
    >>> window_scale(Facts(context_window=8_000), 0)
    1.0
    """
    if scale_below <= 0:
        return 1.0
    return min(max(input_budget_for(facts.context_window), 1) / scale_below, 1.0)


def scaled(size: int, scale: float) -> int:
    """``size`` times ``scale``, rounded down; a size of 0 (switched off) stays 0, any other at least 1.

    >>> scaled(4_000, 0.5), scaled(0, 0.5), scaled(3, 0.1), scaled(4_000, 1.0)
    (2000, 0, 1, 4000)
    """
    if scale >= 1 or size <= 0:
        return size
    return max(math.floor(size * scale), 1)


def scaled_turns(turns: int, scale: float) -> int:
    """A count of turns times ``scale``, rounded half up; 0 stays 0, any other at least 1.

    >>> scaled_turns(3, 0.5), scaled_turns(3, 0.25), scaled_turns(0, 0.5), scaled_turns(3, 1.0)
    (2, 1, 0, 3)
    """
    if scale >= 1 or turns <= 0:
        return turns
    return max(math.floor(turns * scale + 0.5), 1)
