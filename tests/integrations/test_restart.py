"""A framework session reopened on its store goes on as if the process had never stopped.

Before, the adapters stored nodes but not the engine's state (commits, usage, references):
a new process re-derived the context from the whole history, compacting again, so its
requests differed from the uninterrupted run's and the provider's cached prefix broke.
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

import pg_server

from ctxrules.integrations.openai_agents import CtxSession
from ctxrules.store import open_store
from ctxrules.store.protocol import Store
from ctxrules.tokens import HeuristicCounter

WINDOW = 3_000
BEFORE, AFTER = 40, 6


def run_items(i: int) -> list[dict[str, object]]:
    """One run: a question, a file read of varying size, an answer."""
    output = f"src/mod_{i}.py line: def f_{i}(x): return x\n" * (10 + (i * 37) % 60)
    return [
        {"role": "user", "content": f"step {i}: look at mod_{i}"},
        {
            "type": "function_call",
            "call_id": f"c{i}",
            "name": "read_file",
            "arguments": json.dumps({"path": f"src/mod_{i}.py"}),
        },
        {"type": "function_call_output", "call_id": f"c{i}", "output": output},
        {"role": "assistant", "content": f"mod_{i} defines f_{i}"},
    ]


def _session(store: Store, ticks: list[float]) -> CtxSession:
    """A session on ``store`` whose clock counts its own calls in ``ticks``."""

    def clock() -> float:
        ticks[0] += 1.0
        return ticks[0]

    return CtxSession("s", window=WINDOW, store=store, tokenizer=HeuristicCounter(), clock=clock)


async def _runs(session: CtxSession, numbers: range) -> list[list[object]]:
    contexts = []
    for i in numbers:
        await session.add_items(run_items(i))  # type: ignore[arg-type]
        contexts.append(list(await session.get_items()))
    return contexts


def _urls(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> list[str]:
    if backend == "sqlite":
        return [f"sqlite:///{tmp_path / name}.sqlite" for name in "ab"]
    server = request.getfixturevalue("postgres")
    return [pg_server.fresh_schema_url(server) for _ in "ab"]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_reopened_agents_session_builds_the_uninterrupted_runs_contexts(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Compacted before the restart: every context after it equals the uninterrupted run's."""
    urls = _urls(backend, tmp_path, request)
    stores = [open_store(url).unwrap() for url in urls]
    clocks = [[1000.0], [1000.0]]
    going, stopped = (_session(store, ticks) for store, ticks in zip(stores, clocks, strict=True))
    before = asyncio.run(_runs(going, range(BEFORE)))
    assert asyncio.run(_runs(stopped, range(BEFORE))) == before
    assert any("Summary" in str(item) for item in before[-1]), "compacted before the restart"
    # The second process stops; a new one opens the same store and goes on.
    stores[1].close()
    stores[1] = open_store(urls[1]).unwrap()
    reopened = _session(stores[1], clocks[1])
    after = asyncio.run(_runs(going, range(BEFORE, BEFORE + AFTER)))
    assert asyncio.run(_runs(reopened, range(BEFORE, BEFORE + AFTER))) == after
    for store in stores:
        store.close()
