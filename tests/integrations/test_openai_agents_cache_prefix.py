"""Runs of an Agents SDK agent keep the cached prefix, within a run and from one run to the next.

A run's filter goes on in the session's own history, so the session's context at the next
run starts from the run's last model call. Before, the filter went on in a copy: the next
run's first call rebuilt the run's items from the session's older context and broke the
prefix at nearly every run (and, with the integration's old spec, most calls within one).
"""

from __future__ import annotations

import pytest

pytest.importorskip(
    "ctxrules.integrations.openai_agents",
    reason="the agents extra is not installed",
    exc_type=ImportError,
)

import asyncio
import json
from itertools import pairwise
from typing import Any

from agents import (
    Agent,
    Model,
    RunConfig,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from agents_items import neutral, replied

from ctxrules.check import protocol_valid
from ctxrules.integrations.openai_agents import CtxSession
from ctxrules.store import SqliteStore
from ctxrules.tokens import HeuristicCounter

set_tracing_disabled(True)

WINDOW = 16_000
RUNS = 24
#: Tool outputs from a line to a large file (the cap cuts the largest on arrival).
SIZES = (40, 600, 3_000, 12_000, 40_000)


@function_tool
def read_file(n: int) -> str:
    """Read a file."""
    line = f"def handler_{n}(request): return route(request, '/v1/items/{n}')\n"
    size = SIZES[n % len(SIZES)]
    return (line * (size // len(line) + 1))[:size]


class Worker(Model):
    """Reads two or three files a run (one call with two reads in parallel), then reports."""

    def __init__(self) -> None:
        self.inputs: list[list[dict[str, Any]]] = []

    async def get_response(self, system_instructions, input, *args, **kwargs):  # type: ignore[no-untyped-def] # noqa: A002, ARG002
        self.inputs.append([dict(i) for i in input])
        n = len(self.inputs)
        outputs = sum(1 for i in input[-3:] if i.get("type") == "function_call_output")
        if input[-1].get("type") == "function_call_output" and (outputs > 1 or n % 3 == 0):
            return replied(text=f"done {n}")
        width = 2 if n % 4 == 1 else 1
        return replied(*[(f"c{n}_{j}", "read_file", {"n": 10 * n + j}) for j in range(width)])

    def stream_response(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise NotImplementedError


def _session(store: SqliteStore) -> CtxSession:
    seconds = iter(float(t) for t in range(0, 10**6, 5))
    return CtxSession(
        "work",
        window=WINDOW,
        store=store,
        system="Work.",
        tokenizer=HeuristicCounter(),
        clock=lambda: next(seconds),
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):
    """``RUNS`` runs of the agent on one stored session; the model's inputs and the store."""
    path = tmp_path_factory.mktemp("store") / "agents.sqlite"
    store = SqliteStore.open(str(path), synchronous="NORMAL").unwrap()
    model = Worker()
    agent = Agent(name="worker", instructions="Work.", model=model, tools=[read_file])
    session = _session(store)
    config = RunConfig(call_model_input_filter=session.input_filter())

    async def go() -> list[dict[str, object]]:
        for run in range(RUNS):
            await Runner.run(agent, f"Task {run}.", session=session, run_config=config)
        return [dict(i) for i in await session.get_items()]

    last = asyncio.run(go())
    yield model, store, last
    store.close()


def test_model_calls_extend_the_call_before_within_and_across_runs(runs) -> None:
    """At least 85 % of the model calls start with the whole previous call."""
    model, *_ = runs
    calls = [[json.dumps(i, sort_keys=True) for i in items] for items in model.inputs]
    assert len(calls) > 2 * RUNS
    extends = sum(now[: len(before)] == before for before, now in pairwise(calls))
    assert extends >= 0.85 * (len(calls) - 1), f"{extends} of {len(calls) - 1} extend"
    # A run's first call extends the last call of the run before (the session's context
    # starts from it), but where a compaction folds the history.
    starts = [i for i, items in enumerate(model.inputs) if i and items[-1].get("role") == "user"]
    assert len(starts) == RUNS - 1
    kept = sum(calls[i][: len(calls[i - 1])] == calls[i - 1] for i in starts)
    assert kept >= 0.9 * len(starts), f"{kept} of {len(starts)} runs start on the last call"
    # The rules did run: old results were aged to stubs naming their recall handle.
    assert any("[recall h:" in str(i.get("output")) for i in model.inputs[-1])


def test_every_call_is_protocol_valid(runs) -> None:
    """Calls and outputs stay paired in every model call."""
    model, *_ = runs
    for items in model.inputs:
        assert protocol_valid(neutral(items)) == []


def test_a_new_process_goes_on_with_the_same_context(runs) -> None:
    """The session reopened on the store gives the context the old one gave next."""
    _, store, last = runs
    again = _session(store)
    assert [dict(i) for i in asyncio.run(again.get_items())] == last
