"""Exact decisions of the batching policy: what mutation testing found the laws let through.

The prefix-stability properties (invariant 15) hold whether a turn is a batch point or not,
so they cannot tell a policy that fires too often or too late. These tests pin each
trigger's boundary (``<`` against ``<=``), what `mark_batch` records, which marks
`from_new_items` moves, and what `hold_back` restores.
"""

from __future__ import annotations

from pyrsistent import pmap

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules import Facts
from ctxrules.rules.batching import (
    BATCH_COUNT,
    BATCH_ITEMS,
    BATCH_TURN,
    BATCH_WHY,
    Batching,
    BatchReason,
    from_new_items,
    hold_back,
    last_batch,
    mark_batch,
    stable_items,
)
from ctxrules.tokens.budget import output_reserve_for

#: Only the turn trigger is on unless a test switches another one on.
TURNS_ONLY = Batching(every_turns=3, budget_share=0, cold_after_seconds=0, min_history_tokens=0)


def _commit(tokens: int, *, created_at: float = 0.0, batch_turn: int = 0) -> ContextCommit:
    """A commit of one item of ``tokens`` tokens, marked as a batch point at ``batch_turn``."""
    commit = ContextCommit("s", created_at=created_at)
    commit = commit.append_items([ContextItem("n", "user", tokens=tokens)])
    return commit.with_mark(BATCH_COUNT, 1).with_mark(BATCH_TURN, batch_turn)


def test_the_input_budget_is_the_window_less_its_output_reserve() -> None:
    """Without a budget in the facts, the budget share is of the window minus the reserve."""
    assert Batching().input_budget(Facts(context_window=200_000)) == 200_000 - output_reserve_for(
        200_000
    )
    assert Batching().input_budget(Facts(context_window=200_000, budget=1_234)) == 1_234


def test_only_a_parent_never_batched_makes_a_start() -> None:
    """A first commit, or a parent without a batch count, is a start; a batched parent is not."""
    grown = _commit(10)
    assert TURNS_ONLY.reason(None, grown, Facts()) is BatchReason.START
    assert TURNS_ONLY.reason(ContextCommit("s"), grown, Facts()) is BatchReason.START
    assert TURNS_ONLY.reason(_commit(10), grown, Facts(head_turn=1)) is None


def test_a_sent_history_of_exactly_the_floor_may_be_a_batch_point() -> None:
    """Below the floor the history already sent is never rewritten; at exactly the floor it may be."""
    policy = Batching(every_turns=3, budget_share=0, cold_after_seconds=0, min_history_tokens=50)
    facts = Facts(head_turn=3)
    assert policy.reason(_commit(50), _commit(60), facts) is BatchReason.TURNS
    assert policy.reason(_commit(49), _commit(60), facts) is None
    # The new items' raw size does not count: a huge new result is sent capped.
    assert policy.reason(_commit(49), _commit(10_000), facts) is None


def test_the_floor_is_at_most_half_the_input_budget() -> None:
    """At a small window the floor shrinks to half the input budget, or nothing could land."""
    policy = Batching(min_history_tokens=8_000)
    assert policy.floor(Facts(budget=100_000)) == 8_000
    assert policy.floor(Facts(budget=16_000)) == 8_000
    assert policy.floor(Facts(budget=15_999)) == 7_999
    assert policy.floor(Facts(budget=8_000)) == 4_000
    assert Batching(min_history_tokens=0).floor(Facts(budget=8_000)) == 0


def test_the_cold_trigger_fires_from_exactly_its_gap_and_only_when_on() -> None:
    """A gap of exactly ``cold_after_seconds`` since the parent is cold; a gap of 0 switches it off."""
    parent, grown = _commit(10, created_at=100.0), _commit(20)
    cold = Batching(every_turns=99, budget_share=0, cold_after_seconds=1, min_history_tokens=0)
    assert cold.reason(parent, grown, Facts(now=101.0)) is BatchReason.COLD
    assert cold.reason(parent, grown, Facts(now=100.5)) is None
    longer = Batching(every_turns=99, budget_share=0, cold_after_seconds=200, min_history_tokens=0)
    # The gap is now - created_at (50 s), not their sum (250 s).
    assert longer.reason(parent, grown, Facts(now=150.0)) is None
    assert longer.reason(parent, grown, Facts(now=300.0)) is BatchReason.COLD
    off = Batching(every_turns=99, budget_share=0, cold_after_seconds=0, min_history_tokens=0)
    assert off.reason(parent, grown, Facts(now=10_000.0)) is None


def test_the_budget_trigger_fires_on_the_sent_commit_that_crosses_the_share() -> None:
    """The budget point is the sent commit that reaches the share, not one already past it."""
    policy = Batching(every_turns=99, budget_share=0.5, cold_after_seconds=0, min_history_tokens=0)
    facts = Facts(budget=1_000)  # limit: 500 tokens
    assert policy.crosses_budget(_commit(100), _commit(600), facts)
    assert policy.crosses_budget(_commit(100), _commit(500), facts)
    assert not policy.crosses_budget(_commit(100), _commit(499), facts)
    assert not policy.crosses_budget(_commit(500), _commit(700), facts)
    assert not policy.crosses_budget(_commit(600), _commit(700), facts)
    # The system prompt and tool schemas count too: 100 + 400 fixed reaches the limit.
    assert policy.crosses_budget(_commit(50), _commit(100), facts, fixed=400)
    assert not policy.crosses_budget(_commit(50), _commit(99), facts, fixed=400)
    # The raw size never decides: reason() does not know what the rules make of new items.
    assert policy.reason(_commit(100), _commit(10_000), facts) is None
    off = Batching(every_turns=99, budget_share=0, cold_after_seconds=0, min_history_tokens=0)
    assert not off.crosses_budget(_commit(0), _commit(10_000), facts)
    assert not policy.crosses_budget(None, _commit(10_000), facts)
    assert not policy.crosses_budget(ContextCommit("s"), _commit(10_000), facts)


def test_the_cold_trigger_follows_a_provider_cache_lifetime() -> None:
    """``with_cache_ttl`` moves the cold trigger to the TTL; an off trigger or an unknown TTL stays."""
    assert Batching().with_cache_ttl(3_600.0).cold_after_seconds == 3_600.0
    assert Batching().with_cache_ttl(0.0) == Batching()
    off = Batching(cold_after_seconds=0)
    assert off.with_cache_ttl(3_600.0) is off


def test_the_turn_trigger_counts_turns_since_the_last_batch_point() -> None:
    """``every_turns`` turns after the last batch point is a batch point; one fewer is not."""
    parent = _commit(10, batch_turn=10)
    assert TURNS_ONLY.reason(parent, _commit(20), Facts(head_turn=13)) is BatchReason.TURNS
    assert TURNS_ONLY.reason(parent, _commit(20), Facts(head_turn=12)) is None
    # A parent whose marks hold a count but no turn counts from turn 0.
    counted_only = ContextCommit("s").with_mark(BATCH_COUNT, 1)
    assert TURNS_ONLY.reason(counted_only, _commit(20), Facts(head_turn=2)) is None
    assert TURNS_ONLY.reason(counted_only, _commit(20), Facts(head_turn=3)) is BatchReason.TURNS


def test_mark_batch_records_the_count_the_turn_the_items_and_why() -> None:
    """The first batch point counts 1; the marks hold the head turn, the item count and the reason."""
    first = mark_batch(_commit(5).with_mark("rule", 1), Facts(head_turn=7), BatchReason.COLD)
    assert first.marks[BATCH_COUNT] == 2
    unmarked = ContextCommit("s").append_items([ContextItem("n", "user", tokens=5)])
    marked = mark_batch(unmarked, Facts(head_turn=7), BatchReason.START)
    assert dict(marked.marks) == {BATCH_COUNT: 1, BATCH_TURN: 7, BATCH_ITEMS: 1, BATCH_WHY: 1}
    assert last_batch(marked) == (1, BatchReason.START)


def test_last_batch_of_a_commit_never_batched_is_zero_and_none() -> None:
    """A commit without batch marks has had no batch point and no reason."""
    assert last_batch(ContextCommit("s")) == (0, None)
    assert last_batch(ContextCommit("s").with_mark(BATCH_COUNT, 3)) == (3, None)
    assert last_batch(ContextCommit("s").with_mark(BATCH_WHY, 4)) == (0, BatchReason.COLD)


def test_from_new_items_moves_only_rule_marks_before_the_new_items() -> None:
    """Rule marks before ``known`` move to it; later marks and batch marks stay where they are."""
    grown = ContextCommit("s", marks=pmap({"a": 2, "b": 7, "c": 5, BATCH_ITEMS: 3}))
    moved = from_new_items(grown, 5)
    assert dict(moved.marks) == {"a": 5, "b": 7, "c": 5, BATCH_ITEMS: 3}
    assert moved.items == grown.items
    assert from_new_items(grown, 2) == grown


def _items(*names: str, state: State = State.FULL) -> list[ContextItem]:
    return [ContextItem(n, "user", rendered=n, tokens=4, state=state) for n in names]


def test_hold_back_restores_the_sent_items_and_keeps_the_new_ones() -> None:
    """Changes to the parent's items are undone with the parent's marks; a changed new item stays."""
    parent = ContextCommit("s").append_items(_items("a", "b")).with_mark("rule", 1)
    base = parent.begin_generation().append_items(_items("c"))
    ruled = base.replace_items(
        {0: _items("a", state=State.AGED)[0], 2: _items("c", state=State.AGED)[0]}
    ).with_mark("rule", 3)
    held = hold_back(parent, ruled)
    assert [i.state for i in held.items] == [State.FULL, State.FULL, State.AGED]
    assert held.items[0] is parent.items[0]
    assert held.items[1] is parent.items[1]
    assert held.marks == parent.marks
    assert held.total_tokens == ruled.total_tokens
    assert held.id == parent.append_items([ruled.items[2]]).id


def test_hold_back_compares_every_sent_item_when_the_changes_are_unknown() -> None:
    """A commit whose replaced positions are unknown is compared item by item with its parent."""
    parent = ContextCommit("s").append_items(_items("a", "b"))
    ruled = parent.append_items(_items("c")).replace_items({1: _items("b", state=State.AGED)[0]})
    assert ruled.replaced is None
    held = hold_back(parent, ruled)
    assert [i.state for i in held.items] == [State.FULL, State.FULL, State.FULL]
    assert held.items[1] is parent.items[1]


def test_the_stable_items_are_those_fixed_at_the_last_batch_point() -> None:
    """The stable prefix is the item count recorded at the last batch point, never past the end."""
    commit = ContextCommit("s").append_items(_items("a", "b", "c"))
    assert stable_items(commit) == 0
    assert stable_items(commit.with_mark(BATCH_ITEMS, 2)) == 2
    assert stable_items(commit.with_mark(BATCH_ITEMS, 5)) == 3
