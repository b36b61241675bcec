"""Tool aging steps over summarized spans once a result holds its mark: the same commit, less read.

Past a held result the mark stays put, and summarized history piles up behind it: every
batch point walked it again (at 10k messages, 9,545 items for 158 stubs). A summarized
result never ages again, so once held the walk steps over the summarized spans.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxrules.rules.tool_aging as aging
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.commit import summarized_spans
from ctxrules.rules import Facts, WorkMeter, age_tool_results
from ctxrules.rules.cap import CAPPED
from ctxrules.tokens import HeuristicCounter
from tests.rules.full_walk import reading_every_item

RULER = HeuristicCounter()
NAMES = ("load_config", "parse_settings", "src/app/main.py", "ERR_TIMEOUT", "fetchRows")
STATES = st.sampled_from([State.FULL, State.AGED, State.CLEARED, State.SUMMARIZED])
ITEM = st.tuples(
    st.sampled_from(["tool", "assistant", "user"]),
    STATES,
    st.lists(st.sampled_from(NAMES), max_size=3),
    st.integers(0, 3),  # turns since the previous item
    st.booleans(),  # cited
)


def rule() -> object:
    """The default spec's aging, with every option that reads names or holds a result."""
    return age_tool_results(
        2,
        40,
        12,
        8,
        (),
        stub_hint_chars=60,
        cited_tail_turns=5,
        used_tail_turns=4,
        stub_hints_unseen=True,
        used_hint_chars=120,
    )


def commit_of(spec: list[tuple[str, State, list[str], int, bool]]) -> tuple[ContextCommit, Facts]:
    """The commit these items make (a tool result's text names its names) and its facts."""
    items, cited, turn = [], set(), 0
    for n, (role, state, names, step, is_cited) in enumerate(spec):
        turn += step
        is_tool = role == "tool"
        text = " ".join(names) + " plain output line\n" * 6 if is_tool else " ".join(names) or "ok"
        aged_capped = is_tool and state is State.AGED and n % 2 == 0
        items.append(
            ContextItem(
                f"n{n}",
                role,
                state=state,
                rendered=text,
                reason=CAPPED if aged_capped else None,
                tool_name="cat" if is_tool else None,
                tool_call_id=f"c{n}" if is_tool else None,
                turn=turn,
                tokens=RULER.count(text),
            )
        )
        if is_cited:
            cited.add(f"n{n}")
    facts = Facts(head_turn=turn + 1, tokenizer=RULER, cited=frozenset(cited))
    return ContextCommit("s").with_items(items), facts


def as_it_was(commit: ContextCommit, facts: Facts) -> ContextCommit:
    """The rule reading every item."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(aging, "scan", reading_every_item)
        return rule()(commit, facts)  # type: ignore[operator]


@settings(max_examples=300)
@given(st.lists(ITEM, max_size=40))
def test_stepping_over_summarized_spans_changes_nothing(
    spec: list[tuple[str, State, list[str], int, bool]],
) -> None:
    """Items and marks equal those of a walk that reads every item.

    Invariant 3 (monotone tightening) is why: a summarized item never loosens, so the rule
    has nothing to do with it once a held result keeps the mark behind it.
    """
    commit, facts = commit_of(spec)
    got, expected = rule()(commit, facts), as_it_was(commit, facts)  # type: ignore[operator]
    assert list(got.items) == list(expected.items)
    assert dict(got.marks) == dict(expected.marks)


def test_a_summarized_history_behind_a_held_result_is_not_read() -> None:
    """A result still in use at the start: the 4,000 summarized items after it are stepped over."""
    held = [("tool", State.FULL, ["load_config", "parse_settings"], 0, False)]
    old = [("tool", State.SUMMARIZED, ["fetchRows"], 0, False)]
    old += [("assistant", State.SUMMARIZED, ["ERR_TIMEOUT"], 1, False)]
    old *= 2_000
    recent = [("tool", State.FULL, ["fetchRows"], 1, False) for _ in range(5)]
    recent += [("assistant", State.FULL, ["load_config", "parse_settings"], 1, False)]
    commit, facts = commit_of(held + old + recent)
    assert summarized_spans(commit.items) == ((1, 4_001),)
    meter = WorkMeter()
    facts = Facts(head_turn=facts.head_turn, tokenizer=RULER, meter=meter)
    done = rule()(commit, facts)  # type: ignore[operator]
    states = [i.state for i in done.items]
    assert states[-6:] == [State.AGED] * 4 + [State.FULL] * 2
    assert states[0] is State.FULL  # the assistant writes its names: held, the mark stays
    key = next(k for k in done.marks if k.startswith("age_tool_results"))
    assert done.marks[key] == 0
    walked = meter.items_visited
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(aging, "scan", reading_every_item)
        meter.items_visited = 0
        rule()(commit, facts)  # type: ignore[operator]
    # What the walk no longer reads: the 4,000 summarized items behind the held result.
    assert meter.items_visited - walked == 4_000
