"""What users call per turn: a `Context` turn, sync and async, with no store.

A turn adds a user message, records a response with a tool call, adds its result, and
builds the request (``openai()`` or ``await aopenai()``), on a session of 1k, 10k or 100k
messages grown through the same calls (bench/context_turns.py, which also times the
turns in CPU time beside `trim_messages` in one process). Each round is one more turn:
the session grows by three messages a round, as it does in an agent loop.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
#: Rounds per size; a round is one turn.
ROUNDS = {1_000: 60, 10_000: 40, 100_000: 30}


def _context_turns() -> Any:
    spec = importlib.util.spec_from_file_location(
        "ctxrules_context_turns", HERE / "context_turns.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CONTEXT_TURNS = _context_turns()


def _sizes() -> list[Any]:
    # The smoke run grows the 1k session only: 10k takes a minute through Context.
    large = [pytest.mark.bench_large]
    return [
        pytest.param(size, id=f"{size // 1000}k", marks=large if size > 1_000 else [])
        for size in (1_000, 10_000, 100_000)
    ]


@pytest.fixture(scope="session")
def context_loops(bench_module: Any) -> Callable[[int], Any]:
    """A getter of the `Context` session of each size, grown once per run."""
    built: dict[int, Any] = {}

    def get(size: int) -> Any:
        if size not in built:
            built[size] = CONTEXT_TURNS.grow(bench_module, size, peer=False)
        return built[size]

    return get


@pytest.mark.parametrize("size", _sizes())
def test_context_openai_turn(benchmark: Any, context_loops: Any, size: int) -> None:
    """One `Context` turn: three messages added, then ``openai()``."""
    loop = context_loops(size)
    benchmark.extra_info.update(kind="context_openai", size=size, messages=loop.messages())
    request = benchmark.pedantic(
        CONTEXT_TURNS.context_turn(loop), rounds=ROUNDS[size], iterations=1, warmup_rounds=2
    )
    assert request["messages"][-1]["role"] == "tool"


@pytest.mark.parametrize("size", _sizes())
def test_context_aopenai_turn(benchmark: Any, context_loops: Any, size: int) -> None:
    """One async `Context` turn: three messages added, then ``await aopenai()`` on one loop."""
    loop = context_loops(size)
    benchmark.extra_info.update(kind="context_aopenai", size=size, messages=loop.messages())
    turn = CONTEXT_TURNS.async_turn(loop)
    runner = asyncio.Runner()
    try:
        request = benchmark.pedantic(
            lambda: runner.run(turn()), rounds=ROUNDS[size], iterations=1, warmup_rounds=2
        )
    finally:
        runner.close()
    assert request["messages"][-1]["role"] == "tool"
