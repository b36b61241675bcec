"""A compaction keeps each rule's mark up to where it folds: the rules then read what moved.

It dropped every mark, so the turn after a compaction walked the whole history once per
rule: at 100k messages the gate and aging rules read 100,000 items each, and the
compaction turn took 373 ms against 1.2 ms for a plain one. Before the fold's slot the
fold only summarizes, and a rule has nothing to do with a summarized item.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.marks import EMPTY_MARKS
from ctxrules.compaction import CutParams, Outcome, compact
from ctxrules.engine.turn import changed_since
from ctxrules.render import counted
from ctxrules.rules import Facts, Pipeline, WorkMeter
from ctxrules.spec import load_spec
from ctxrules.testing.compaction import FakeSummarizer
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
DEFAULT_SPEC = Path(__file__).resolve().parents[2] / "specs" / "default.toml"
NAMES = ("load_config", "parse_settings", "src/app/main.py", "ERR_TIMEOUT", "fetchRows", "db.py")
#: The fold keeps this many tokens of recent history in view.
KEEP = CutParams(
    keep_min_tokens=0,
    keep_recent_tokens=400,
    protect_last_n=2,
    keep_min_messages=2,
    protect_first_n=1,
)
TURN = st.tuples(
    st.lists(st.sampled_from(NAMES), max_size=3),  # names the result holds
    st.lists(st.sampled_from(NAMES), max_size=2),  # names the assistant writes next
    st.integers(20, 60),  # lines of output
    st.sampled_from(["Read", "Bash", "Grep", "todo_list"]),
)


def default_pipeline() -> Pipeline:
    """The pipeline of specs/default.toml."""
    return load_spec(DEFAULT_SPEC).unwrap()


def turn_items(
    turn: int, names: list[str], wrote: list[str], lines: int, tool: str
) -> list[ContextItem]:
    """One turn: the user, the assistant calling ``tool``, its result naming ``names``."""
    now = 60.0 * turn
    output = "\n".join([" ".join(names), *(f"row {turn}.{n} value" for n in range(lines))])
    said = " ".join(["Next I use", *wrote]) if wrote else f"step {turn}"
    made = [
        ContextItem(f"u{turn}", "user", rendered=f"go on {turn}", turn=turn, created_at=now),
        ContextItem(f"a{turn}", "assistant", rendered=said, turn=turn, created_at=now),
        ContextItem(
            f"t{turn}",
            "tool",
            rendered=output,
            tool_name=tool,
            tool_call_id=f"c{turn}",
            arguments=f'{{"path": "src/m{turn % 5}.py"}}',
            turn=turn,
            created_at=now,
        ),
    ]
    return [counted(item, RULER) for item in made]


def facts_at(turn: int, meter: WorkMeter | None = None) -> Facts:
    """The facts of a turn of a 32k window, an hour a turn on (every gate's clock passes)."""
    return Facts(
        now=3_600.0 * turn,
        head_turn=turn,
        context_window=32_000,
        tokenizer=RULER,
        meter=meter,
    )


def grow(
    pipeline: Pipeline, base: ContextCommit, turns: list[tuple[list[str], list[str], int, str]]
) -> ContextCommit:
    """``base`` with these turns added, the rules run after each, as a session grows."""
    commit = base
    for spec in turns:
        turn = commit.next_turn()
        commit = commit.with_items([*commit.items, *turn_items(turn, *spec)])
        commit = pipeline.run(commit, facts_at(turn + 1))
    return commit


def folded(commit: ContextCommit) -> ContextCommit:
    """``commit`` with its older part folded into a summary (the rules' marks as the fold leaves them)."""
    result = compact(
        commit, FakeSummarizer("the story so far"), facts_at(commit.next_turn()), params=KEEP
    )
    assert result.outcome is Outcome.FINISHED, result.outcome
    return result.commit


@settings(max_examples=40, deadline=None)
@given(
    st.lists(TURN, min_size=8, max_size=24),
    st.lists(TURN, min_size=4, max_size=12),
    st.integers(0, 12),
)
def test_invariant_3_rules_from_the_kept_marks_equal_rules_from_scratch(
    first: list[tuple[list[str], list[str], int, str]],
    then: list[tuple[list[str], list[str], int, str]],
    later: int,
) -> None:
    """Invariant 3: after a fold, the rules from the kept marks give what they give from none.

    A summarized item never changes again, so a rule has nothing to do before the slot.
    Checked after one fold and after a second, then and ``later`` turns on (when more of
    the kept tail is old enough to age).
    """
    pipeline = default_pipeline()
    once = folded(grow(pipeline, ContextCommit("s"), first))
    twice = folded(grow(pipeline, once, then))
    for commit in (once, twice):
        facts = facts_at(commit.next_turn() + later)
        kept = pipeline.run(commit, facts)
        scratch = pipeline.run(attrs.evolve(commit, marks=EMPTY_MARKS), facts)
        assert list(kept.items) == list(scratch.items)
        assert any(i.state is State.SUMMARY for i in kept.items)


def visited_after_second_fold(first_turns: int) -> int:
    """Items the rules visit on the commit a second fold makes, after ``first_turns`` turns folded once."""
    pipeline = default_pipeline()
    history = [(["load_config"], [], 30, "Bash")] * first_turns
    once = folded(grow(pipeline, ContextCommit("s"), history))
    twice = folded(grow(pipeline, once, [(["fetchRows"], ["fetchRows"], 30, "Grep")] * 12))
    meter = WorkMeter()
    pipeline.run(twice, facts_at(twice.next_turn(), meter))
    return meter.items_visited


def test_after_a_fold_the_rules_read_what_moved_not_the_history() -> None:
    """Ten times the history folded before: the same items visited after the next fold."""
    small, large = visited_after_second_fold(30), visited_after_second_fold(300)
    assert small > 0
    assert large == small


@settings(max_examples=30, deadline=None)
@given(st.lists(TURN, min_size=8, max_size=24), st.lists(TURN, min_size=4, max_size=12))
def test_changes_after_a_fold_are_counted_as_a_whole_comparison_counts_them(
    first: list[tuple[list[str], list[str], int, str]],
    then: list[tuple[list[str], list[str], int, str]],
) -> None:
    """`changed_since` over a fold reads from the first difference on, and counts what a full comparison does."""
    pipeline = default_pipeline()
    before = grow(pipeline, folded(grow(pipeline, ContextCommit("s"), first)), then)
    after = folded(before)
    earlier = {i.source_node_id: i.state for i in before.items}
    whole = Counter(
        i.reason
        for i in after.items
        if i.source_node_id in earlier and earlier[i.source_node_id] is not i.state
    )
    assert after.replaced is None  # the fold moved positions: the comparison path is taken
    assert changed_since(before, after) == whole
    assert sum(whole.values()) > 0
