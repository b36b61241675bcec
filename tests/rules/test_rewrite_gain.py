"""Landings weighed against what they rewrite (``min_gain_of_rewrite``) from the scale budget up."""

from __future__ import annotations

import attrs

import ctxrules.commit.commit as commit_module
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules import Facts, NamedRule, Pipeline, age_tool_results
from ctxrules.rules.batching import (
    BATCH_COUNT,
    BATCH_TURN,
    Batching,
    BatchReason,
    last_batch,
    rewritten,
)
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _items(*tokens: int) -> list[ContextItem]:
    return [ContextItem(f"n{i}", "tool", tokens=t) for i, t in enumerate(tokens)]


def test_rewritten_counts_from_the_first_changed_item_to_the_end() -> None:
    """Items before the first change are read from the cache; the rest is written again."""
    held = ContextCommit("s").with_items(_items(100, 200, 300, 400))
    landed = held.replace_items({1: attrs.evolve(held.items[1], tokens=20)})
    assert rewritten(held, landed) == 20 + 300 + 400
    assert rewritten(held, held) == 0
    assert rewritten(held, held.append_items(_items(5))) == 5


def test_a_landing_lands_when_it_frees_enough_of_what_it_rewrites() -> None:
    """At 200k with a share of 0.72, freeing 720 of 1,000 rewritten tokens lands; 719 does not."""
    policy = Batching(scale_below=16_000, min_gain_of_rewrite=0.72)
    facts = Facts(context_window=200_000)
    held = ContextCommit("s").with_items(_items(500, 1_000 + 720, 0))
    lands = held.replace_items({1: attrs.evolve(held.items[1], tokens=1_000)})
    short = held.replace_items({1: attrs.evolve(held.items[1], tokens=1_001)})
    assert rewritten(held, lands) == 1_000
    assert policy.worth_landing(held, lands, facts)
    assert not policy.worth_landing(held, short, facts)
    assert Batching(scale_below=16_000).worth_landing(held, short, facts)


def test_the_share_leaves_small_windows_to_the_quarter_rule() -> None:
    """Under the scale budget only the quarter of the budget counts, whatever the share."""
    policy = Batching(scale_below=16_000, min_gain_of_rewrite=100.0)
    facts = Facts(context_window=16_000)
    held = ContextCommit("s").with_items(_items(6_400))
    assert policy.worth_landing(held, ContextCommit("s").with_items(_items(4_400)), facts)
    assert not policy.worth_landing(held, ContextCommit("s").with_items(_items(4_401)), facts)
    assert policy.weighs(facts)
    assert policy.weighs(Facts(context_window=200_000))
    assert not Batching(scale_below=16_000).weighs(Facts(context_window=200_000))


def _step(text: str, recent: str, *, hashed: list[int] | None = None) -> ContextCommit:
    """A turn-count point at 200k: one old result pending aging, a large recent one in the tail.

    ``hashed`` collects the positions whose digest terms the step itself works out.
    """
    pipeline = Pipeline(
        (NamedRule("age", age_tool_results(1, 200, 40, 0, ())),),
        batching=Batching(
            every_turns=16,
            budget_share=0,
            cold_after_seconds=0,
            min_history_tokens=0,
            scale_below=16_000,
            min_gain_of_rewrite=0.72,
        ),
    )
    old = ContextItem(
        "t0",
        "tool",
        rendered=text,
        tool_name="cat",
        tool_call_id="c0",
        turn=0,
        tokens=RULER.count(text),
    )
    tail = ContextItem(
        "t1",
        "tool",
        rendered=recent,
        tool_name="cat",
        tool_call_id="c1",
        turn=15,
        tokens=RULER.count(recent),
    )
    # The rules ran on the parent when its results were recent: their marks are laid down.
    ruled = pipeline.run(
        ContextCommit("s").with_items([old, tail]), Facts(context_window=200_000, head_turn=1)
    )
    parent = ruled.with_mark(BATCH_COUNT, 1).with_mark(BATCH_TURN, 0)
    # As commit generation grows a child: its replaced positions start empty.
    grown = parent.begin_generation().append_items(
        [ContextItem("a16", "assistant", rendered="ok", turn=16, tokens=1)]
    )
    real = commit_module.position_term

    def counting(index: int, item: ContextItem, digest: str | None = None) -> int:
        if hashed is not None:
            hashed.append(index)
        return real(index, item, digest)

    commit_module.position_term = counting  # type: ignore[assignment]
    try:
        return pipeline.step(
            parent, grown, Facts(context_window=200_000, head_turn=16, tokenizer=RULER)
        )
    finally:
        commit_module.position_term = real


def test_a_turn_count_point_that_rewrites_more_than_it_frees_waits() -> None:
    """A small old result before a large recent one: aging it would rewrite the large one for little.

    The trial run that weighed it hashed nothing: its stub was never part of a commit's id.
    """
    hashed: list[int] = []
    step = _step("def handler(): return 1\n" * 10, "x = 1\n" * 2_000, hashed=hashed)
    assert step.items[0].state is State.FULL
    assert last_batch(step) == (1, None)
    assert hashed == []


def test_a_turn_count_point_that_frees_most_of_what_it_rewrites_lands() -> None:
    """A large old result before a small recent one ages at the turn-count point, its digest right."""
    hashed: list[int] = []
    step = _step("def handler(): return 1\n" * 2_000, "x = 1\n" * 10, hashed=hashed)
    assert step.items[0].state is State.AGED
    assert last_batch(step) == (2, BatchReason.TURNS)
    assert step.digest == ContextCommit("s").with_items(step.items).digest
    assert step.digest_base is None
    # The landed stub's term replaces the old one's: worked out once, when it landed.
    assert sorted(hashed) == [0, 0]
