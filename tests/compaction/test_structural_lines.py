"""The structural summary names what it folds: a tool result's names and handle, kept under the budget."""

from __future__ import annotations

import pytest

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.compaction import CompactionPlan, CutParams, plan_compaction, structural_summary
from ctxrules.compaction.summarizer import bound_summary
from ctxrules.render import counted
from ctxrules.rules.handles import handles_in, item_handle
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
PARAMS = CutParams(keep_min_tokens=0, keep_recent_tokens=10, protect_last_n=1, keep_min_messages=1)
SOURCE = (
    "func HandleSessionStart(ctx context.Context) error {\n  return registry.LookupAgent(ctx)\n}\n"
)


def _items() -> list[ContextItem]:
    items = []
    for i in range(6):
        items.append(
            counted(ContextItem(f"a{i}", "assistant", rendered=f"reading file {i}", turn=i), RULER)
        )
        items.append(
            counted(
                ContextItem(
                    f"t{i}",
                    "tool",
                    rendered=SOURCE * 30,
                    tool_name="Read",
                    tool_call_id=f"c{i}",
                    arguments=f'{{"file_path": "/repo/cmd/agent_{i}.go"}}',
                    turn=i,
                ),
                RULER,
            )
        )
    return items


def _plan(window: int) -> CompactionPlan:
    plan = plan_compaction(ContextCommit("s").with_items(_items()), window, PARAMS)
    assert isinstance(plan, CompactionPlan)
    return plan


def test_a_folded_result_is_named_with_its_call_names_and_handle() -> None:
    """From a 32k window up, each folded tool line holds its path, its names and its handle."""
    text = structural_summary(_plan(32_000))
    tools = [line for line in text.splitlines() if line.startswith("[tool Read]")]
    assert len(tools) >= 3
    for line in tools:
        i = int(line.split("/repo/cmd/agent_", 1)[1][0])
        assert "HandleSessionStart" in line
        assert "registry.LookupAgent" in line
        assert handles_in(line) == (item_handle(_items()[2 * i + 1]),)


@pytest.mark.parametrize("window", [8_000, 16_000])
def test_a_small_window_keeps_the_plain_lines(window: int) -> None:
    """Under a 16,000-token input budget the lines are role and 60 characters, as before."""
    plan = _plan(window)
    assert plan.lines == () or all(
        len(line.split("] ", 1)[1]) <= 61 for line in structural_summary(plan).splitlines()
    )
    assert not handles_in(structural_summary(plan))


def test_a_summary_over_budget_keeps_every_handle_before_folding_lines() -> None:
    """Lines shrink to label and handle, oldest first, so no folded item loses its handle."""
    text = structural_summary(_plan(32_000))
    full = RULER.count(text)
    bounded = bound_summary(text, full * 2 // 3, RULER)
    assert RULER.count(bounded) <= full * 2 // 3
    assert handles_in(bounded) == handles_in(text)
    assert "[… " not in bounded
    assert bounded.splitlines()[-1] == text.splitlines()[-1]
    short = [line for line in bounded.splitlines() if line.startswith("[tool Read] [recall h:")]
    assert short
    assert bounded.splitlines().index(short[0]) < 3
