"""The four-way budget and the table of real context windows (reference 001 §2)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxrules.tokens import HeuristicCounter
from ctxrules.tokens.budget import (
    DEFAULT_OUTPUT_RESERVE,
    BudgetAllocation,
    allocate,
    output_reserve_for,
    tools_schema_tokens,
)
from ctxrules.tokens.models import CONTEXT_WINDOWS, real_context_window


@given(
    window=st.integers(1, 2_000_000),
    system=st.integers(0, 10_000),
    history=st.integers(0, 2_000_000),
    tools=st.integers(0, 10_000),
    requested=st.integers(0, 100_000),
)
def test_allocation_adds_up(window, system, history, tools, requested):
    """The reserve is at least 25 % of the window, and the four parts and headroom add up."""
    a = allocate(window, system, history, tools, output_reserve=requested)
    assert a.output_reserve >= window * 0.25
    assert a.output_reserve <= max(window // 2, -(-window // 4))
    assert a.input_used == system + history + tools
    assert a.input_budget == window - a.output_reserve
    assert a.headroom == a.input_budget - a.input_used
    if a.input_budget > 0:
        assert a.input_used_pct == pytest.approx(a.input_used / a.input_budget)
    else:
        assert a.input_used_pct == float("inf")


@pytest.mark.parametrize(
    ("window", "reserve"),
    [
        (1_000_000, 250_000),
        (200_000, 50_000),
        (64_000, 16_384),
        (40_000, 16_384),
        (32_000, 16_000),
        (8_000, 4_000),
    ],
)
def test_reserve_default_and_floor(window, reserve):
    """The default reserve is 16384, raised to 25 % of big windows and capped at half of small ones."""
    assert allocate(window, 0, 0, 0).output_reserve == reserve
    assert output_reserve_for(window) == reserve
    assert DEFAULT_OUTPUT_RESERVE == 16_384


def test_tools_schema_counts_json_and_overhead():
    """A tool costs its JSON text plus 5 tokens; an empty tool list costs nothing."""
    ruler = HeuristicCounter()
    tool = {
        "name": "read_file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
    assert tools_schema_tokens([tool, tool], ruler) == 2 * (ruler.count(json.dumps(tool)) + 5)
    assert tools_schema_tokens([], ruler) == 0


INVALID = [
    (lambda: allocate(0, 0, 0, 0), "context_window=0"),
    (lambda: allocate(1_000, -1, 0, 0), "system=-1"),
    (lambda: allocate(1_000, 0, -5, 0), "history=-5"),
    (lambda: allocate(1_000, 0, 0, -2), "tools_schema=-2"),
    (lambda: allocate(1_000, 0, 0, 0, output_reserve=-1), "output_reserve=-1"),
    (lambda: allocate(1_000, 0, 0, 0, min_output_share=0.6), "min_share=0.6"),
    (lambda: BudgetAllocation(-3), "context_window=-3"),
]


@pytest.mark.parametrize(("build", "message"), INVALID, ids=[m for _, m in INVALID])
def test_invalid_arguments(build, message):
    """Each invalid argument raises ValueError naming it in name=value form."""
    with pytest.raises(ValueError, match=message):
        build()


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("claude-sonnet-4-20250514", 200_000),
        ("claude-opus-4-1", 200_000),
        ("gpt-4o-mini", 128_000),
        ("gpt-4o-2024-08-06", 128_000),
        ("gpt-4.1-nano", 1_047_576),
        ("gpt-5", 272_000),
        ("o3-mini", 200_000),
        ("gemini-2.5-pro", 1_048_576),
    ],
)
def test_known_windows_by_longest_prefix(model, window):
    """A dated or suffixed model name finds its family's real window, not its max output."""
    assert real_context_window(model).unwrap() == window


def test_override_wins_and_unknown_suggests():
    """The caller's override beats the table; an unknown name fails with the closest names."""
    assert real_context_window("gpt-4o", override=64_000).unwrap() == 64_000
    error = real_context_window("claude-sonet-4").failure()
    assert error.suggestions[0] == "claude-sonnet-4"
    assert "pass window=..." in error.message
    bad = real_context_window("x", override=0).failure()
    assert (bad.window, bad.known) == (0, None)
    assert all(window >= 128_000 for window in CONTEXT_WINDOWS.values())
