"""The trigger policy: three thresholds, each switchable, and the wait after an insufficient compaction."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pmap

from ctxrules.compaction import Action, Hold, Outcome, Policy, compact, decide, hold_after
from ctxrules.dag import Session
from ctxrules.generation import ensure_latest_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.testing.compaction import FakeSummarizer
from ctxrules.tokens import HeuristicCounter
from ctxrules.tokens.budget import allocate

LEVELS = st.none() | st.floats(0.05, 1.5)


@given(st.integers(1, 10**6), st.integers(0, 2 * 10**6), LEVELS, LEVELS, LEVELS)
def test_decide_picks_the_highest_crossed_threshold(window, used, recommend, auto, emergency):
    """Each threshold fires from its share up, the highest crossed wins, and None switches one off."""
    levels = [x for x in (recommend, auto, emergency) if x is not None]
    if levels != sorted(levels):
        with pytest.raises(ValueError, match="thresholds must not decrease"):
            Policy(recommend, auto, emergency)
        return
    policy = Policy(recommend, auto, emergency)
    prep = allocate(window, 0, used, 0)
    pct = prep.input_used_pct
    expected = Action.NONE
    for level, action in (
        (recommend, Action.RECOMMEND),
        (auto, Action.COMPACT),
        (emergency, Action.EMERGENCY),
    ):
        if level is not None and pct >= level:
            expected = action
    assert decide(prep, policy) is expected


def test_defaults_are_the_seeds():
    """Recommend at 70 %, compact at 80 %, emergency at 95 % of the input budget."""
    assert (Policy().recommend_pct, Policy().compact_pct, Policy().emergency_pct) == (
        0.70,
        0.80,
        0.95,
    )
    assert decide(allocate(200_000, 0, 104_999, 0)) is Action.NONE
    assert decide(allocate(200_000, 0, 105_000, 0)) is Action.RECOMMEND
    assert decide(allocate(200_000, 0, 120_000, 0)) is Action.COMPACT
    assert decide(allocate(200_000, 0, 142_500, 0)) is Action.EMERGENCY


def test_all_off_never_compacts():
    """With every threshold off, even a full window asks for nothing."""
    off = Policy(None, None, None)
    assert decide(allocate(8_000, 0, 1_000_000, 0), off) is Action.NONE
    assert hold_after(allocate(8_000, 0, 1_000_000, 0), off) is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"recommend_pct": 0}, "recommend_pct=0"),
        ({"compact_pct": -0.1}, "compact_pct=-0.1"),
        ({"compact_pct": 0.99}, "compact_pct=0.99 > emergency_pct=0.95"),
        ({"regrow_pct": -1}, "regrow_pct=-1"),
    ],
)
def test_invalid_policies(kwargs, message):
    """A bad threshold is refused with its name and value."""
    with pytest.raises(ValueError, match=message):
        Policy(**kwargs)


def test_hold_suppresses_automatic_levels_until_growth():
    """Under a hold, compact and emergency become WAIT until the history reaches hold.until."""
    hold = Hold(until=146_000)
    assert decide(allocate(200_000, 0, 125_000, 0), hold=hold) is Action.WAIT
    assert decide(allocate(200_000, 0, 145_999, 0), hold=hold) is Action.WAIT
    assert decide(allocate(200_000, 0, 146_000, 0), hold=hold) is Action.EMERGENCY
    assert decide(allocate(200_000, 0, 130_000, 0), hold=Hold(until=130_000)) is Action.COMPACT
    assert decide(allocate(200_000, 0, 110_000, 0), hold=hold) is Action.RECOMMEND


def test_no_compaction_loop_after_an_insufficient_compaction():
    """A compaction that cannot get under 80 % makes later attempts wait for growth, with no LLM call."""
    ruler = HeuristicCounter()
    window = 32_000
    facts = Facts(context_window=window, tokenizer=ruler)
    # The task statement alone is near the threshold, and the first items never fold.
    session = Session("s").send("user", "spec " * 18_000).unwrap()
    fake = FakeSummarizer("ok")
    known = pmap()
    hold = None
    attempts: list[tuple[int, Outcome]] = []
    waits = 0
    for n in range(120):
        role = "assistant" if n % 2 == 0 else "user"
        session = session.send(role, f"step {n} " + "detail " * 120).unwrap()
        commit, known = ensure_latest_commit(
            known, session.graph, session.head, Pipeline(), facts
        ).unwrap()
        action = decide(allocate(window, 0, commit.total_tokens, 0), hold=hold)
        if action is Action.WAIT:
            waits += 1
            assert commit.total_tokens < hold.until
            continue
        if action in {Action.COMPACT, Action.EMERGENCY}:
            calls = len(fake.calls)
            result = compact(commit, fake, facts)
            attempts.append((len(fake.calls) - calls, result.outcome))
            known = known.set(session.head, result.commit)
            after = allocate(window, 0, result.commit.total_tokens, 0)
            hold = hold_after(after)
            assert hold is not None  # the protected task statement keeps it over the threshold
            assert hold.until == after.history + 800
    assert waits > len(attempts) > 2
    # An attempt runs only after growth: a no_op costs no call, a finished one exactly one.
    assert {(calls, outcome) for calls, outcome in attempts} <= {
        (0, Outcome.NO_OP),
        (1, Outcome.FINISHED),
    }
    assert (1, Outcome.FINISHED) in attempts
