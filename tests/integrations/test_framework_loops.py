"""A quick slice of ``bench/framework_loops.py``: both integrations in a scripted agent loop.

Each row is a LangChain or Agents SDK agent working through tasks with ctxrules (store,
recall tools) and again without; the test asserts the bench's goals on its figures.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip(
    "ctxrules.integrations.langchain",
    reason="the langchain extra is not installed",
    exc_type=ImportError,
)
pytest.importorskip(
    "ctxrules.integrations.openai_agents",
    reason="the agents extra is not installed",
    exc_type=ImportError,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import framework_loops


@pytest.mark.parametrize("framework", ["langchain", "agents"])
def test_a_framework_loop_keeps_the_prefix_the_window_and_its_recalls(framework: str) -> None:
    """≥ 85 % of calls extend the previous, none over the window, every recall whole, cheaper than naive."""
    row = framework_loops.row(framework, 16_000, 20)
    assert row["calls"] >= 40
    assert row["recalls"] >= 2
    assert row["misses"] == [], row
    assert row["naive_max_tokens"] > 16_000  # the loop outgrows the window without ctxrules
