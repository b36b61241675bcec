"""Batched tightening: rules say what may tighten, the batching policy says when it lands.

Between two batch points a commit only grows at its end: changes the rules make to items the
previous request already sent are held back (with the rules' marks, so nothing is lost) and
land together at the next batch point. A provider's cached prompt prefix then breaks once
per batch instead of on almost every turn (invariant 15).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

import attrs
from pyrsistent import pmap

from ctxrules.commit.commit import ContextCommit
from ctxrules.rules.facts import Facts
from ctxrules.rules.scale import window_scale
from ctxrules.tokens.budget import input_budget_for

#: Keys under which a commit records its last batch point (rule marks hold plain integers).
BATCH_COUNT = "batch:count"
BATCH_TURN = "batch:turn"
BATCH_ITEMS = "batch:items"
BATCH_WHY = "batch:why"
_BATCH_PREFIX = "batch:"


class BatchReason(enum.IntEnum):
    """Why pending tightening landed on a commit (stored as an integer among its marks)."""

    START = 1
    TURNS = 2
    BUDGET = 3
    COLD = 4
    COMPACTION = 5


#: The floor is at most this share of the input budget: at a small window a fixed floor
#: would swallow the whole budget and no tightening would ever land.
FLOOR_SHARE = 0.5
#: At a small window a turn-count or budget batch point lands only when it frees at least this
#: share of the input budget: one that frees less is followed by another a few turns later.
MIN_GAIN_SHARE = 0.25


@attrs.frozen
class Batching:
    """When pending tightening is applied (the spec's ``[batching]`` table).

    A batch point is: every ``every_turns`` assistant turns since the last one; the turn the
    history *as sent* (new results already capped) crosses ``budget_share`` of the input
    budget; a turn after a gap of at least ``cold_after_seconds`` (the provider's cache has
    expired, so a rewrite costs nothing extra); or a compaction (the engine settles pending
    tightening with it). While the history already sent is under the floor,
    ``min_history_tokens`` but at most `FLOOR_SHARE` of the input budget, nothing is a batch
    point: a small history is cheap to keep whole. ``budget_share`` and
    ``cold_after_seconds`` of 0 switch that trigger off. At a window whose input budget is
    under ``scale_below`` tokens (0: never), a turn-count or budget point that would free
    less than `MIN_GAIN_SHARE` of the input budget does not land (`worth_landing`). At a
    larger window, with ``min_gain_of_rewrite`` (0: off), such a point lands only when the
    tokens it frees are at least that share of the tokens it makes the provider write again.
    """

    every_turns: int = 16
    budget_share: float = 0.8
    cold_after_seconds: float = 300.0
    min_history_tokens: int = 8_000
    scale_below: int = 0
    min_gain_of_rewrite: float = 0.0

    def input_budget(self, facts: Facts) -> int:
        """The input budget the share is of: ``Facts.budget`` or the window less its reserve."""
        if facts.budget is not None:
            return facts.budget
        return input_budget_for(facts.context_window)

    def floor(self, facts: Facts) -> int:
        """Tokens of sent history below which nothing is rewritten.

        >>> Batching().floor(Facts(context_window=200_000)), Batching().floor(Facts(context_window=8_000))
        (8000, 2000)
        """
        return min(self.min_history_tokens, int(FLOOR_SHARE * self.input_budget(facts)))

    def reason(
        self, parent: ContextCommit | None, grown: ContextCommit, facts: Facts
    ) -> BatchReason | None:
        """Why ``grown`` (the parent plus the new items, before the rules) is a batch point, or None.

        Only what the rules cannot change is decided here: the start, the clock and the turn
        count. Whether the history crosses the budget share depends on what the rules make of
        the new items (a 190,000-character result is sent capped), so `crosses_budget`
        decides it on the commit as it would be sent.
        """
        del grown  # the triggers decided here do not depend on the new items' size
        if parent is None or BATCH_COUNT not in parent.marks:
            return BatchReason.START
        if parent.total_tokens < self.floor(facts):
            return None
        if self.cold_after_seconds > 0 and facts.now - parent.created_at >= self.cold_after_seconds:
            return BatchReason.COLD
        if facts.head_turn - parent.marks.get(BATCH_TURN, 0) >= self.every_turns:
            return BatchReason.TURNS
        return None

    def crosses_budget(
        self, parent: ContextCommit | None, sent: ContextCommit, facts: Facts, fixed: int = 0
    ) -> bool:
        """Whether ``sent`` (the commit as it would go out) is the turn that crosses the share.

        ``fixed`` counts what every request carries besides the history (system prompt, tool
        schemas). A history already past the share when the parent was sent does not cross
        it again.
        """
        if self.budget_share <= 0 or parent is None or BATCH_COUNT not in parent.marks:
            return False
        limit = self.budget_share * self.input_budget(facts)
        return parent.total_tokens + fixed < limit <= sent.total_tokens + fixed

    def small(self, facts: Facts) -> bool:
        """Whether the window is small (its input budget under ``scale_below``).

        >>> Batching(scale_below=16_000).small(Facts(context_window=16_000)), Batching().small(Facts(context_window=8_000))
        (True, False)
        """
        return window_scale(facts, self.scale_below) < 1

    def weighs(self, facts: Facts) -> bool:
        """Whether a turn-count or budget point is weighed before it lands (`worth_landing`).

        >>> Batching(min_gain_of_rewrite=0.7).weighs(Facts()), Batching().weighs(Facts())
        (True, False)
        """
        return self.small(facts) or self.min_gain_of_rewrite > 0

    def worth_landing(self, held: ContextCommit, landed: ContextCommit, facts: Facts) -> bool:
        """Whether landing the pending tightening (``held`` before, ``landed`` after) is worth a break.

        Below ``scale_below``, when the landing frees at least `MIN_GAIN_SHARE` of the input
        budget: a small window fills again within a few turns of a landing that frees less,
        so such a landing waits for the compaction due at the same threshold, which folds the
        history in the same single break. At a larger window, with ``min_gain_of_rewrite``,
        when the tokens freed are at least that share of the tokens from the first changed
        item to the end (`rewritten`): a cached token read costs a fraction of one written,
        so a landing that frees little of what it rewrites costs more than it saves before
        the next batch point, which lands it with more at the price of one break.
        """
        freed = held.total_tokens - landed.total_tokens
        if self.small(facts):
            return freed >= MIN_GAIN_SHARE * self.input_budget(facts)
        if self.min_gain_of_rewrite <= 0:
            return True
        return freed >= self.min_gain_of_rewrite * rewritten(held, landed)

    def with_cache_ttl(self, ttl_seconds: float) -> Batching:
        """This policy with the cold trigger at a provider's cache lifetime (kept if it is off or unknown).

        >>> Batching().with_cache_ttl(3600.0).cold_after_seconds, Batching().with_cache_ttl(0).cold_after_seconds
        (3600.0, 300.0)
        """
        if self.cold_after_seconds <= 0 or ttl_seconds <= 0:
            return self
        return attrs.evolve(self, cold_after_seconds=ttl_seconds)


def rewritten(held: ContextCommit, landed: ContextCommit) -> int:
    """Tokens of ``landed`` from its first item that differs from ``held``'s to the end.

    That is what the provider writes again when ``landed`` replaces ``held``; 0 when nothing
    changed.

    >>> from ctxrules.commit import ContextItem
    >>> a, b, c = (ContextItem(n, "tool", tokens=9) for n in "abc")
    >>> held = ContextCommit("s").append_items([a, b, c])
    >>> rewritten(held, held.replace_items({1: attrs.evolve(b, tokens=3)}))
    12
    """
    # Chunks the two share are not read: at a resumed session's batch point, reading every
    # item to compare them loaded the whole history from the store (2.7 s at 100k).
    first = held.items.first_difference(landed.items)
    if first is None:
        return 0
    return sum(item.tokens for item in landed.items[first:])


def mark_batch(commit: ContextCommit, facts: Facts, why: BatchReason) -> ContextCommit:
    """``commit`` recorded as a batch point: its items are the new stable prefix."""
    count = commit.marks.get(BATCH_COUNT, 0) + 1
    marks = {
        BATCH_COUNT: count,
        BATCH_TURN: facts.head_turn,
        BATCH_ITEMS: len(commit.items),
        BATCH_WHY: int(why),
    }
    return attrs.evolve(commit, marks=commit.marks.update(pmap(marks)))


def from_new_items(grown: ContextCommit, known: int) -> ContextCommit:
    """``grown`` with every rule mark at ``known`` or later: the rules visit only new items.

    Between batch points the rules' changes to the first ``known`` items are held back
    (`hold_back`), so visiting them again each turn would be work thrown away.
    """
    marks = grown.marks
    for key, position in grown.marks.items():
        if position < known and not key.startswith(_BATCH_PREFIX):
            marks = marks.set(key, known)
    return grown if marks is grown.marks else attrs.evolve(grown, marks=marks)


def marks_before(marks: Mapping[str, int], end: int) -> dict[str, int]:
    """The rule marks of ``marks``, each at ``end`` or before (batch marks dropped).

    For a commit whose items from ``end`` on were replaced and whose earlier items were at
    most summarized (a compaction's fold): a rule has nothing to do with a summarized item,
    so what it had done before its mark still holds there, and it visits only what moved.

    >>> marks_before({"cap:1": 90, "age:2": 40, BATCH_TURN: 7}, 50)
    {'cap:1': 50, 'age:2': 40}
    """
    return {
        key: min(position, end)
        for key, position in marks.items()
        if not key.startswith(_BATCH_PREFIX)
    }


def declined(held: ContextCommit, facts: Facts) -> ContextCommit:
    """``held`` (the turn held back) noting a turn-count point that was not worth landing.

    The turn counter restarts here, so the pending tightening is weighed again a full
    ``every_turns`` later rather than on every turn.
    """
    return attrs.evolve(held, marks=held.marks.set(BATCH_TURN, facts.head_turn))


def hold_back(parent: ContextCommit, ruled: ContextCommit) -> ContextCommit:
    """``ruled`` with the parent's items and marks restored: only the new items may differ.

    The rules' marks go back with the items, so the held-back tightening is found again
    at the next batch point.
    """
    known = min(len(parent.items), len(ruled.items))
    # The positions the rules replaced, when the commit kept them: O(changed), not O(items).
    touched = range(known) if ruled.replaced is None else sorted(set(ruled.replaced))
    restore = {
        index: parent.items[index]
        for index in touched
        if index < known and ruled.items[index] is not parent.items[index]
    }
    return attrs.evolve(ruled.replace_items(restore), marks=parent.marks)


def last_batch(commit: ContextCommit) -> tuple[int, BatchReason | None]:
    """How many batch points the commit's chain has had, and why the last one happened.

    >>> last_batch(ContextCommit("s"))
    (0, None)
    """
    why = commit.marks.get(BATCH_WHY)
    return commit.marks.get(BATCH_COUNT, 0), BatchReason(why) if why is not None else None


def held_back(before: ContextCommit | None, commit: ContextCommit) -> bool:
    """Whether ``commit`` is a turn-count point weighed and held back (`declined`), after ``before``.

    Its turn counter restarted with no batch point recorded: landing the pending tightening
    would have freed too little of what it rewrites, so the request extends the one before.

    >>> from ctxrules.rules.facts import Facts
    >>> before = ContextCommit("s").with_mark(BATCH_COUNT, 1).with_mark(BATCH_TURN, 0)
    >>> held_back(before, declined(before, Facts(head_turn=32))), held_back(before, before)
    (True, False)
    """
    if before is None or BATCH_TURN not in before.marks:
        return False
    marks, earlier = commit.marks, before.marks
    return marks.get(BATCH_COUNT) == earlier.get(BATCH_COUNT) and marks.get(
        BATCH_TURN
    ) != earlier.get(BATCH_TURN)


def stable_items(commit: ContextCommit) -> int:
    """How many leading items were fixed at the last batch point (the cache's stable part)."""
    return min(commit.marks.get(BATCH_ITEMS, 0), len(commit.items))
