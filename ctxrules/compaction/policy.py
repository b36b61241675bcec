"""When to compact: recommend at 70 %, compact at 80 %, emergency at 95 % (reference 001 §4.1)."""

from __future__ import annotations

import enum
import itertools
import math
from typing import Any

import attrs

from ctxrules.tokens.budget import BudgetAllocation


class Action(enum.StrEnum):
    """What the policy says to do before sending a request."""

    NONE = "none"
    RECOMMEND = "recommend"
    COMPACT = "compact"
    EMERGENCY = "emergency"
    WAIT = "wait"
    """Compaction is due but the last one could not get under the threshold; wait for growth."""


def _threshold(_: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and not value > 0:
        msg = f"{attribute.name}={value} must be None (off) or a share of the input budget > 0"
        raise ValueError(msg)


@attrs.frozen
class Policy:
    """The three thresholds (shares of the input budget, ``None`` switches one off) and the wait.

    ``recommend_pct`` only tells the UI (0.70); ``compact_pct`` (0.80) leaves room for the
    summary call itself, which Hermes' 50 % would make too frequent and Claude Code's 93 %
    too late; ``emergency_pct`` (0.95) keeps the next turn inside the window. After an
    attempt that leaves the input at or above the compact threshold, automatic compaction
    waits until the history has grown by ``regrow_pct`` of the input budget (our default).
    """

    recommend_pct: float | None = attrs.field(default=0.70, validator=_threshold)
    compact_pct: float | None = attrs.field(default=0.80, validator=_threshold)
    emergency_pct: float | None = attrs.field(default=0.95, validator=_threshold)
    regrow_pct: float = 0.05

    def __attrs_post_init__(self) -> None:
        levels = [
            (name, value)
            for name, value in (
                ("recommend_pct", self.recommend_pct),
                ("compact_pct", self.compact_pct),
                ("emergency_pct", self.emergency_pct),
            )
            if value is not None
        ]
        for (low_name, low), (high_name, high) in itertools.pairwise(levels):
            if low > high:
                msg = f"{low_name}={low} > {high_name}={high}; thresholds must not decrease"
                raise ValueError(msg)
        if self.regrow_pct < 0:
            msg = f"regrow_pct={self.regrow_pct} must be >= 0"
            raise ValueError(msg)

    @property
    def auto_pct(self) -> float | None:
        """The lowest threshold that compacts on its own, or None when both are off."""
        return self.compact_pct if self.compact_pct is not None else self.emergency_pct


@attrs.frozen
class Hold:
    """No automatic compaction until the history reaches ``until`` tokens."""

    until: int


def decide(
    prep: BudgetAllocation,
    policy: Policy = Policy(),
    hold: Hold | None = None,
) -> Action:
    """Which threshold the request prepared in ``prep`` crosses, if any.

    >>> from ctxrules.tokens.budget import allocate
    >>> [decide(allocate(200_000, 0, used, 0)).value for used in (100_000, 110_000, 125_000, 145_000)]
    ['none', 'recommend', 'compact', 'emergency']
    >>> decide(allocate(200_000, 0, 125_000, 0), Policy(compact_pct=None))
    <Action.RECOMMEND: 'recommend'>
    >>> decide(allocate(200_000, 0, 125_000, 0), hold=Hold(until=130_000))
    <Action.WAIT: 'wait'>
    """
    pct = prep.input_used_pct
    if policy.emergency_pct is not None and pct >= policy.emergency_pct:
        action = Action.EMERGENCY
    elif policy.compact_pct is not None and pct >= policy.compact_pct:
        action = Action.COMPACT
    elif policy.recommend_pct is not None and pct >= policy.recommend_pct:
        return Action.RECOMMEND
    else:
        return Action.NONE
    return Action.WAIT if hold is not None and prep.history < hold.until else action


def hold_after(
    after: BudgetAllocation,
    policy: Policy = Policy(),
) -> Hold | None:
    """After an automatic attempt: a hold if the input is still at or over the threshold.

    >>> from ctxrules.tokens.budget import allocate
    >>> hold_after(allocate(200_000, 0, 125_000, 0))
    Hold(until=132500)
    >>> hold_after(allocate(200_000, 0, 60_000, 0)) is None
    True
    """
    threshold = policy.auto_pct
    if threshold is None or after.input_used_pct < threshold:
        return None
    growth = max(math.ceil(policy.regrow_pct * max(after.input_budget, 0)), 1)
    return Hold(after.history + growth)
