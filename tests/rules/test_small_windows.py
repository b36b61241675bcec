"""Small windows: sizes that shrink with the input budget, and landings weighed before they break the prefix."""

from __future__ import annotations

import pytest

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.compaction import compact
from ctxrules.rules import Facts, NamedRule, Pipeline, age_tool_results, cap_tool_result
from ctxrules.rules.artifacts import files_in_line
from ctxrules.rules.batching import BATCH_COUNT, BATCH_TURN, Batching, BatchReason, last_batch
from ctxrules.rules.scale import scaled, scaled_turns, window_scale
from ctxrules.testing.compaction import FakeSummarizer
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _tool(i: int, text: str, turn: int) -> ContextItem:
    return ContextItem(
        f"t{i}",
        "tool",
        rendered=text,
        tool_name="read_file",
        tool_call_id=f"c{i}",
        arguments='{"path": "src/module.py"}',
        turn=turn,
        tokens=RULER.count(text),
    )


@pytest.mark.parametrize(
    ("window", "kept"), [(8_000, 1_000), (16_000, 2_000), (32_000, 4_000), (1_000_000, 4_000)]
)
def test_the_cap_keeps_its_size_from_the_scale_budget_up_and_shrinks_below(
    window: int, kept: int
) -> None:
    """With scale_below=16000 a result is capped at 4,000 characters from a 32k window up, in proportion below."""
    cap = cap_tool_result(4_000, 0.33, scale_below=16_000)
    facts = Facts(context_window=window, tokenizer=RULER)
    item = _tool(0, "x" * 50_000, 0)
    assert len(cap.on_arrival(item, facts).rendered) == kept
    commit = ContextCommit("s").with_items([item])
    assert len(cap(commit, facts).items[0].rendered) == kept
    assert Pipeline((NamedRule("cap", cap),)).result_chars_at(facts) == kept


def test_a_cap_without_scale_below_keeps_its_size_at_every_window() -> None:
    """The parameter is off by default: a user's cap of 4,000 characters stays 4,000 at 8k."""
    facts = Facts(context_window=8_000, tokenizer=RULER)
    item = _tool(0, "x" * 50_000, 0)
    assert len(cap_tool_result(4_000, 0.33).on_arrival(item, facts).rendered) == 4_000


def test_aging_shrinks_its_tail_window_and_stubs_below_the_scale_budget() -> None:
    """At 16k (half the scale budget) three tail turns become two and the stub's head half as long."""
    age = age_tool_results(3, 200, 40, 0, (), stub_hint_chars=0, scale_below=16_000)
    text = "".join(f"line {i:03d} of the module source\n" for i in range(40))
    items = [_tool(i, text, turn=i) for i in range(6)]
    commit = ContextCommit("s").with_items(items)
    small = age(commit, Facts(context_window=16_000, head_turn=6, tokenizer=RULER))
    large = age(commit, Facts(context_window=32_000, head_turn=6, tokenizer=RULER))
    assert [i.state for i in small.items] == [State.AGED] * 4 + [State.FULL] * 2
    assert [i.state for i in large.items] == [State.AGED] * 3 + [State.FULL] * 3
    assert small.items[0].rendered.startswith("[tool read_file] output: line 000 of the modu… ")
    assert large.items[0].rendered.startswith(
        "[tool read_file] output: line 000 of the module source line 001 o… "
    )


def test_the_scale_is_the_budget_share_and_sizes_never_vanish() -> None:
    """A size shrinks in proportion but stays at least 1 (0 stays off); turns round half up."""
    assert window_scale(Facts(context_window=16_000), 16_000) == 0.5
    assert window_scale(Facts(context_window=40_000), 16_000) == 1.0
    assert (scaled(1, 0.01), scaled(0, 0.01), scaled(201, 0.5)) == (1, 0, 100)
    assert (scaled_turns(1, 0.1), scaled_turns(5, 0.5), scaled_turns(4, 0.3)) == (1, 3, 1)


def _history(tokens: int, count: int = 1) -> ContextCommit:
    return ContextCommit("s").with_items(
        [ContextItem(f"n{i}", "user", tokens=tokens) for i in range(count)]
    )


def test_a_small_window_lands_only_what_frees_a_quarter_of_the_budget() -> None:
    """At 16k (budget 8,000) a landing must free 2,000 tokens; from 32k up any landing is worth it."""
    policy = Batching(scale_below=16_000)
    facts = Facts(context_window=16_000)
    assert policy.worth_landing(_history(6_400), _history(4_400), facts)
    assert not policy.worth_landing(_history(6_400), _history(4_401), facts)
    assert policy.worth_landing(_history(6_400), _history(6_399), Facts(context_window=32_000))
    assert Batching().worth_landing(_history(6_400), _history(6_399), facts)


def _pending(window: int) -> tuple[Pipeline, ContextCommit, ContextCommit, Facts]:
    """A batched parent whose old result is still whole, a new turn, and the facts at turn 16."""
    pipeline = Pipeline(
        (NamedRule("age", age_tool_results(1, 200, 40, 0, (), scale_below=16_000)),),
        batching=Batching(
            every_turns=16,
            budget_share=0,
            cold_after_seconds=0,
            min_history_tokens=0,
            scale_below=16_000,
        ),
    )
    old = _tool(0, "def handler():\n    return lookup(request)\n" * 20, turn=0)
    parent = ContextCommit("s").with_items([old]).with_mark(BATCH_COUNT, 1).with_mark(BATCH_TURN, 0)
    grown = parent.append_items([_tool(1, "ok", turn=16)])
    return pipeline, parent, grown, Facts(context_window=window, head_turn=16, tokenizer=RULER)


def test_a_turn_count_point_that_frees_little_is_declined_at_a_small_window() -> None:
    """At 16k aging one small result is not worth a prefix break; the turn counter restarts."""
    pipeline, parent, grown, facts = _pending(16_000)
    step = pipeline.step(parent, grown, facts)
    assert step.items[0] == parent.items[0]
    assert last_batch(step) == (1, None)
    assert step.marks[BATCH_TURN] == 16
    assert pipeline.batching is not None
    assert pipeline.batching.reason(step, step, facts) is None


def test_a_turn_count_point_lands_as_before_from_the_scale_budget_up() -> None:
    """At 32k the same turn is a batch point and the old result ages."""
    pipeline, parent, grown, facts = _pending(32_000)
    step = pipeline.step(parent, grown, facts)
    assert step.items[0].state is State.AGED
    assert last_batch(step) == (2, BatchReason.TURNS)


@pytest.mark.parametrize(("window", "most"), [(8_000, 500), (16_000, 1_000), (32_000, 2_000)])
def test_a_summary_trail_shrinks_with_a_small_window(window: int, most: int) -> None:
    """A fold's "Files written so far" line names at most 2,000 characters of paths from 32k up, in proportion below.

    At 16k the fixed 2,000 characters (some 700 tokens of paths) sat in every request after
    a fold, a ninth of the input budget: the next fold came that much sooner.
    """
    items = [ContextItem("u0", "user", rendered="Task: fix the tests.", tokens=6)]
    for i in range(600):
        items.append(ContextItem(f"a{i}", "assistant", rendered=f"Step {i}.", tokens=4, turn=i))
        items.append(
            ContextItem(
                f"t{i}",
                "tool",
                rendered="ok",
                tool_name="Write",
                tool_call_id=f"c{i}",
                arguments=f'{{"path": "src/package_{i:04d}/module.py"}}',
                turn=i,
                tokens=30,
            )
        )
    commit = ContextCommit("s").with_items(items)
    facts = Facts(context_window=window, tokenizer=RULER)
    result = compact(commit, FakeSummarizer("Files were written."), facts)
    assert result.applied
    summary = result.commit.items[result.commit.summary_at].rendered
    named = files_in_line(summary)
    assert sum(len(p) + 2 for p in named) <= most < sum(len(p) + 2 for p in named) + 30
    assert "; and " in summary
