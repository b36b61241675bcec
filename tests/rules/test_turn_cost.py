"""Counted work: one turn of the default pipeline visits as many items at 100k as at 1k."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.render import counted
from ctxrules.rules import Facts, NamedRule, Pipeline, WorkMeter, builtins, scan
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
DEFAULT_SPEC = Path(__file__).resolve().parents[2] / "specs" / "default.toml"
#: Mutation runs (docs/mutation.md) run these tests once per mutant of rules/ and commit/, so
#: there the histories are smaller; still five to ten times apart, so a rescan still shows.
MUTATION = settings.get_current_profile_name() == "mutation"
SMALL, LARGE = (500, 2_500) if MUTATION else (1_000, 20_000)
RESCAN_SMALL, RESCAN_LARGE = (100, 1_000) if MUTATION else (300, 3_000)


def default_pipeline() -> Pipeline:
    """The pipeline of specs/default.toml."""
    spec = pytest.importorskip("ctxrules.spec", reason="the spec language is not built yet")
    return spec.load_spec(DEFAULT_SPEC).unwrap()


def turn_items(turn: int, now: float) -> list[ContextItem]:
    """One turn: a user message, an assistant reply and a large tool call."""
    return [
        counted(
            ContextItem(f"u{turn}", "user", rendered=f"step {turn}", turn=turn, created_at=now),
            RULER,
        ),
        counted(
            ContextItem(
                f"a{turn}", "assistant", rendered=f"doing {turn}", turn=turn, created_at=now
            ),
            RULER,
        ),
        counted(
            ContextItem(
                f"t{turn}",
                "tool",
                rendered="row " * 1200,
                tool_name="grep",
                tool_call_id=f"c{turn}",
                arguments="{}",
                turn=turn,
                created_at=now,
            ),
            RULER,
        ),
    ]


def grow(pipeline: Pipeline, items: int) -> tuple[ContextCommit, int, float]:
    """Run the pipeline turn by turn (30 s apart) until the commit holds ``items`` items."""
    commit, turn, now = ContextCommit("s"), 0, 0.0
    while len(commit.items) < items:
        commit = commit.append_items(turn_items(turn, now))
        turn += 1
        commit = pipeline.run(commit, Facts(now=now, head_turn=turn, tokenizer=RULER))
        now += 30.0
    return commit, turn, now


def visits_for_next_turn(pipeline: Pipeline, items: int) -> int:
    """Items the pipeline visits for one more turn on a history of ``items`` items."""
    commit, turn, now = grow(pipeline, items)
    meter = WorkMeter()
    pipeline.run(
        commit.append_items(turn_items(turn, now)),
        Facts(now=now, head_turn=turn + 1, tokenizer=RULER, meter=meter),
    )
    return meter.items_visited


@pytest.mark.slow
def test_default_pipeline_turn_cost_at_100k_is_within_2x_of_1k() -> None:
    """Items visited per turn at 100k items are at most twice those at 1k (performance contract)."""
    pipeline = default_pipeline()
    small, large = visits_for_next_turn(pipeline, 1_000), visits_for_next_turn(pipeline, 100_000)
    assert large <= 2 * small, (small, large)


def test_default_pipeline_turn_cost_at_20k_is_within_2x_of_1k() -> None:
    """The same contract at 20k items, cheap enough for every run."""
    pipeline = default_pipeline()
    small, large = visits_for_next_turn(pipeline, SMALL), visits_for_next_turn(pipeline, LARGE)
    assert large <= 2 * small, (small, large)


def test_a_full_scan_would_be_caught() -> None:
    """The meter is able to fail: a rule that ignores its mark visits every item each turn."""

    def rescan_everything(commit: ContextCommit, facts: Facts) -> ContextCommit:
        for _ in scan(commit, 0, facts):
            pass
        return commit

    pipeline = Pipeline((NamedRule("rescan", rescan_everything),))
    large, small = (
        visits_for_next_turn(pipeline, RESCAN_LARGE),
        visits_for_next_turn(pipeline, RESCAN_SMALL),
    )
    assert large > 2 * small


def test_builtins_in_seed_order_keep_the_contract() -> None:
    """Without the spec file, the four built-ins in the seed's order also visit O(new) items."""
    registry = builtins()
    order = ("cap_tool_result", "age_tool_results", "gate_tool_results", "clear_idle")
    pipeline = Pipeline(tuple(NamedRule(n, registry[n].build().unwrap()) for n in order))
    small, large = visits_for_next_turn(pipeline, SMALL), visits_for_next_turn(pipeline, LARGE)
    assert large <= 2 * small, (small, large)
    assert small < 100
