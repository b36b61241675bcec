"""Idle clearing steps over summarized spans: the same commit, without reading them.

A resumed session's summarized items live in the store; reading them to find nothing to
clear cost the first request after a restart 2.8 s at 100k messages.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules import Facts, WorkMeter, idle
from ctxrules.rules.idle import IDLE_PLACEHOLDER, clear_idle
from tests.rules.full_walk import reading_every_item

STATES = st.sampled_from([State.FULL, State.AGED, State.CLEARED, State.SUMMARIZED])


def commit_of(states: list[tuple[State, bool]]) -> ContextCommit:
    """A commit of tool results (``True``) and user messages in these states, 100 s old."""
    return ContextCommit("s").with_items(
        [
            ContextItem(
                f"n{i}",
                "tool" if is_tool else "user",
                state=state,
                rendered="x",
                tool_name="grep" if is_tool else None,
                tool_call_id=f"c{i}" if is_tool else None,
                changed_at=0.0,
                created_at=0.0,
            )
            for i, (state, is_tool) in enumerate(states)
        ]
    )


@given(st.lists(st.tuples(STATES, st.booleans()), max_size=80))
def test_stepping_over_summarized_spans_changes_nothing(
    states: list[tuple[State, bool]],
) -> None:
    """Items and marks equal those of a scan that reads every item."""
    rule = clear_idle(60.0, IDLE_PLACEHOLDER, ())
    commit = commit_of(states)
    got = rule(commit, Facts(now=100.0))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(idle, "scan", reading_every_item)
        expected = rule(commit, Facts(now=100.0))
    assert list(got.items) == list(expected.items)
    assert dict(got.marks) == dict(expected.marks)


def test_a_summarized_history_is_not_read() -> None:
    """Only the items outside the summarized span are visited, from a mark at the start."""
    # 10,000 summarized items, then a few recent ones: only the recent ones are visited.
    states = [(State.SUMMARIZED, n % 3 == 2) for n in range(10_000)]
    states += [(State.AGED, True), (State.FULL, False), (State.FULL, True)]
    meter = WorkMeter()
    done = clear_idle(60.0, IDLE_PLACEHOLDER, ())(commit_of(states), Facts(now=100.0, meter=meter))
    assert meter.items_visited == 3
    assert done.items[10_000].state is State.CLEARED
