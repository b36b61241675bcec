"""A batch point weighed again costs what changed: pending stubs are not worked out anew.

Between two turn-count points weighed and declined, the pending results are stubbed again
on every trial, each with the same text unless the names in view changed. Their stubs'
texts, recall handles (a hash each), renderings and token counts are what they were, so a
second trial builds, hashes, renders and counts nothing; only the stubs' dates move.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import attrs
import pytest

import ctxrules.render.item as item_rendering
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.rules import Facts, age_tool_results
from ctxrules.rules import handles as handles_module
from ctxrules.rules import tool_aging as aging_module
from ctxrules.tokens import HeuristicCounter
from tests.counting_ruler import CountingRuler

RULER = HeuristicCounter()
TURNS = 24


def history() -> ContextCommit:
    """``TURNS`` turns of a user message, a reply and a result whose names the reply shows in part."""
    items: list[ContextItem] = []
    for turn in range(TURNS):
        names = f"load_config_{turn} src/pkg/mod_{turn}.py parse_args_{turn % 3}"
        items += [
            ContextItem(f"dw_u{turn}", "user", rendered=f"go on {turn}", turn=turn),
            ContextItem(
                f"dw_a{turn}", "assistant", rendered=f"see parse_args_{turn % 3}", turn=turn
            ),
            ContextItem(
                f"dw_t{turn}",
                "tool",
                rendered="\n".join(f"{names} row {n}" for n in range(12)),
                tool_name="Bash",
                tool_call_id=f"c{turn}",
                arguments=f'{{"cmd": "cat src/pkg/mod_{turn}.py"}}',
                turn=turn,
            ),
        ]
    return ContextCommit("s").append_items([counted(item, RULER) for item in items])


RULE = age_tool_results(
    3, 200, 0, 0, (), stub_hint_chars=60, used_tail_turns=4, stub_hints_unseen=True,
    used_hint_chars=400,
)  # fmt: skip


def test_a_trial_weighed_again_builds_hashes_renders_and_counts_nothing(
    monkeypatch: pytest.MonkeyPatch, recorded_calls: Callable[[object, str], list[Any]]
) -> None:
    """Counted: the second trial on the same pending results builds no stub, handle, rendering or count.

    The first trial stubs every result outside the tail window; the second, 30 s later (the
    next weighed point, with the same names in view), dates them again and does nothing else.
    """
    commit, ruler = history(), CountingRuler()
    facts = Facts(now=3_600.0, head_turn=TURNS, context_window=200_000, tokenizer=ruler)
    first = RULE(commit, facts)
    stubbed = [i for i, item in enumerate(first.items) if item.state is State.AGED]
    assert len(stubbed) >= TURNS - 4

    hashed: list[bytes] = []

    def sha256(data: bytes) -> Any:
        hashed.append(data)
        return hashlib.sha256(data)

    monkeypatch.setattr(handles_module, "hashlib", SimpleNamespace(sha256=sha256))
    rendered: list[ContextItem] = recorded_calls(item_rendering, "render_item")
    stubbed_again: list[ContextItem] = recorded_calls(aging_module, "tool_stub")
    ruler.characters = 0
    later = RULE(commit, attrs.evolve(facts, now=facts.now + 30.0))

    assert stubbed_again == []
    assert hashed == []
    assert rendered == []
    assert ruler.characters == 0
    for index in stubbed:
        again, before = later.items[index], first.items[index]
        assert again == attrs.evolve(before, changed_at=facts.now + 30.0)


def test_a_stub_whose_names_came_into_view_is_built_again() -> None:
    """A trial after a message shows one of a result's names gives what a first trial gives.

    The kept inputs hold the names in view that the result's text holds: one more of them
    misses, and the stub is the one worked out with no memo at all.
    """
    facts = Facts(now=3_600.0, head_turn=TURNS + 1, context_window=200_000, tokenizer=RULER)
    shows = ContextItem("dw_u_late", "user", rendered="now use load_config_5 again", turn=TURNS)
    weighed = history()
    first = RULE(weighed, facts)
    later = RULE(weighed.append_items([counted(shows, RULER)]), attrs.evolve(facts, now=4_000.0))
    fresh = RULE(history().append_items([counted(shows, RULER)]), attrs.evolve(facts, now=4_000.0))
    assert list(later.items) == list(fresh.items)
    result = next(i for i, item in enumerate(first.items) if item.source_node_id == "dw_t5")
    assert "load_config_5" in first.items[result].rendered
    assert "load_config_5" not in later.items[result].rendered
