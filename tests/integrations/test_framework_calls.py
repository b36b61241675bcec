"""A quick slice of ``bench/framework_calls.py``: each integration's hook, timed per model call."""

from __future__ import annotations

import sys
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

from ctxrules.tokens import HeuristicCounter


def test_the_bench_times_both_hooks_at_the_size_asked() -> None:
    """Both rows reach the size asked and time every call (the work itself is counted elsewhere).

    `test_langchain_call_cost.py` and `test_openai_agents_run_cost.py` count what a call
    reads, exactly; this keeps the bench that times it running as the integrations change.
    """
    ruler = HeuristicCounter()
    # The bench's fixtures, as bench/conftest.py gives them (that module is the bench's own).
    bench = SimpleNamespace(
        RULER=ruler, peer_tokens=lambda messages: sum(ruler.count(str(m.content)) for m in messages)
    )
    langchain = framework_calls.langchain(400, 5, bench)
    agents = framework_calls.agents(400, 5, bench)
    for row in (langchain, agents):
        assert row["messages"] >= 400, row
        assert row["mean_ms"] >= row["median_ms"] / 5 > 0, row
    assert langchain["trim_messages_ms"] > 0
