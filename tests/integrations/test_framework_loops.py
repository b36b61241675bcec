"""Quick slices of ``bench/framework_loops.py`` and ``bench/framework_calls.py``.

A loop's row is a LangChain or Agents SDK agent working through tasks with ctxrules (store,
recall tools) and again without; the test asserts the bench's goals on its figures. The
calls' rows time each integration's hook for one model call.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

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

import framework_calls
import framework_loops

from ctxrules.tokens import HeuristicCounter


@pytest.mark.parametrize("framework", ["langchain", "agents"])
def test_a_framework_loop_keeps_the_prefix_the_window_and_its_recalls(framework: str) -> None:
    """≥ 85 % of calls extend the previous, none over the window, every recall whole, cheaper than naive."""
    row = framework_loops.row(framework, 16_000, 20)
    assert row["calls"] >= 40
    assert row["recalls"] >= 2
    assert row["misses"] == [], row
    assert row["naive_max_tokens"] > 16_000  # the loop outgrows the window without ctxrules


def test_the_calls_bench_times_both_hooks_doing_their_work() -> None:
    """Each row reaches the size asked, and its timed calls were the hook's work, not a fallback.

    `test_langchain_call_cost.py` and `test_openai_agents_run_cost.py` count what a call
    reads, exactly; this keeps the bench that times it honest as the integrations change.
    """
    ruler = HeuristicCounter()
    # The bench's fixtures, as bench/conftest.py gives them (that module is the bench's own).
    bench = SimpleNamespace(
        RULER=ruler, peer_tokens=lambda messages: sum(ruler.count(str(m.content)) for m in messages)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = [framework_calls.langchain(400, 5, bench), framework_calls.agents(400, 5, bench)]
    # A hook that failed warns and sends the input as it is: none did.
    assert not [w for w in caught if "ctxrules" in str(w.message)]
    for row in rows:
        assert row["messages"] >= 400, row
        # The engine's context was sent (its rendered messages: a reply's text and its call
        # are two until the provider's form merges them).
        assert row["sent"] > 0, row
        assert row["median_ms"] > 0, row
    assert rows[0]["trim_messages_ms"] > 0
