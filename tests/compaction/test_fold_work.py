"""A fold's work: each folded item is copied once, never rendered nor counted.

A fold takes about a thousand items at 10k messages, and each became summarized through
`tighten` (a copy, a rendering, a count, a second copy for its summary): 55 us an item,
113 ms a fold. A summarized item renders nothing, so it counts no tokens: the fold builds
it in one copy, and what it builds is what `tighten` gave.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

import ctxrules.render.item as item_rendering
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.compaction import CutParams, Outcome, compact
from ctxrules.compaction.apply import COMPACTED, SUMMARIZED_TOKENS
from ctxrules.render import counted, item_tokens
from ctxrules.rules import Facts, tighten
from ctxrules.testing.compaction import FakeSummarizer
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
KEEP = CutParams(
    keep_min_tokens=0,
    keep_recent_tokens=400,
    protect_last_n=2,
    keep_min_messages=2,
    protect_first_n=1,
)
FACTS = Facts(now=90_000.0, head_turn=40, context_window=32_000, tokenizer=RULER)


def history(turns: int) -> ContextCommit:
    """``turns`` turns of a user message, a reply and a tool result, every item counted."""
    items: list[ContextItem] = []
    for turn in range(turns):
        now = 60.0 * turn
        items += [
            ContextItem(f"fw_u{turn}", "user", rendered=f"go on {turn}", turn=turn, created_at=now),
            ContextItem(
                f"fw_a{turn}",
                "assistant",
                rendered=f"reading mod_{turn}",
                turn=turn,
                created_at=now,
            ),
            ContextItem(
                f"fw_t{turn}",
                "tool",
                rendered="\n".join(f"row {turn}.{n} load_config value" for n in range(30)),
                tool_name="Bash",
                tool_call_id=f"c{turn}",
                arguments=f'{{"cmd": "cat src/mod_{turn}.py"}}',
                turn=turn,
                created_at=now,
            ),
        ]
    return ContextCommit("s").append_items([counted(item, RULER) for item in items])


def test_a_fold_renders_only_its_summary(
    recorded_calls: Callable[[object, str], list[Any]],
) -> None:
    """Counted: folding 100 items renders the summary item alone (it rendered each item too)."""
    commit = history(40)
    rendered: list[ContextItem] = recorded_calls(item_rendering, "render_item")
    result = compact(commit, FakeSummarizer(), FACTS, params=KEEP)
    assert result.outcome is Outcome.FINISHED, result.outcome
    folded = [item for item in result.commit.items if item.state is State.SUMMARIZED]
    assert len(folded) >= 100
    assert [item.state for item in rendered] == [State.SUMMARY]


def test_a_folded_item_is_the_one_tighten_gives() -> None:
    """Each summarized item equals `tighten` to summarized with its summary's id, token for token."""
    commit = history(40)
    result = compact(commit, FakeSummarizer(), FACTS, params=KEEP)
    assert result.outcome is Outcome.FINISHED, result.outcome
    by_id = {item.source_node_id: item for item in commit.items}
    folded = [item for item in result.commit.items if item.state is State.SUMMARIZED]
    assert folded
    for item in folded:
        assert item.merged_into == result.summary_id
        before = by_id[item.source_node_id]
        tightened = tighten(before, State.SUMMARIZED, FACTS, reason=COMPACTED)
        assert tightened is not None
        assert item == attrs.evolve(tightened, merged_into=result.summary_id)
        assert item.tokens == item_tokens(item, RULER) == SUMMARIZED_TOKENS
