"""A `CtxSession` reopened on its store between Agents SDK runs sends what the first one would have.

Before, the calls within a run were prepared by the session's filter but their commits
were never stored: reopened, the session went on from the commit of the last run's start
and rebuilt the run in one step, so the batched rules aged other results than they had.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip(
    "ctxrules.integrations.openai_agents",
    reason="the agents extra is not installed",
    exc_type=ImportError,
)

from agents import Agent, Model, RunConfig, Runner, function_tool, set_tracing_disabled
from agents_items import Reads

from ctxrules.integrations.openai_agents import CtxSession
from ctxrules.store import SqliteStore
from ctxrules.tokens import HeuristicCounter

WINDOW = 8_000
RUNS, REOPEN_AT = 10, 5
INSTRUCTIONS = "Fetch blobs."

set_tracing_disabled(True)


class Fetches(Reads, Model):
    """Calls ``read_file`` six times per run, then answers; logs every input it was given."""


@function_tool
def read_file(part: int) -> str:
    """Read one part of a file: from a line to some 8,000 characters, by the part."""
    size = (60, 400, 2_500, 8_000)[part % 4]
    lines = (
        f"src/pkg/file_{part}.py:{k}: value_{k * 7 % 1013} = f(arg_{k % 31})"
        for k in range(size // 40 + 1)
    )
    return "\n".join(lines)[:size]


def model_inputs(path: Path, *, reopen: bool) -> list[str]:
    """Every model input of ``RUNS`` runs stored at ``path``; ``reopen``: a new session and store midway."""
    model = Fetches(calls=6)
    agent = Agent(name="fetcher", instructions=INSTRUCTIONS, model=model, tools=[read_file])
    store = SqliteStore.open(str(path)).unwrap()

    def session() -> CtxSession:
        # Time is the number of model calls so far: both runs read the same clock.
        return CtxSession(
            "s1",
            window=WINDOW,
            store=store,
            system=INSTRUCTIONS,
            tokenizer=HeuristicCounter(),
            clock=lambda: 1_000.0 + 30.0 * len(model.inputs),
        )

    async def go() -> None:
        nonlocal store
        current = session()
        for run in range(RUNS):
            if reopen and run == REOPEN_AT:
                store.close()
                store = SqliteStore.open(str(path)).unwrap()
                current = session()
            config = RunConfig(call_model_input_filter=current.input_filter())
            await Runner.run(agent, f"Run {run}: fetch.", session=current, run_config=config)

    asyncio.run(go())
    store.close()
    return [json.dumps(items, sort_keys=True, default=str) for items in model.inputs]


def test_every_request_after_a_reopen_is_the_uninterrupted_runs(tmp_path: Path) -> None:
    """Reopened between two runs, the session sends every later request as the first session would."""
    going = model_inputs(tmp_path / "going.sqlite", reopen=False)
    reopened = model_inputs(tmp_path / "reopened.sqlite", reopen=True)
    reopened_at = REOPEN_AT * 7  # six reads and an answer per run
    assert len(going) == len(reopened) == RUNS * 7
    assert reopened[:reopened_at] == going[:reopened_at]
    differing = [n for n in range(reopened_at, len(going)) if reopened[n] != going[n]]
    assert differing == []
