"""`Context` driven from asyncio with a store, as an async SDK client drives it.

`aopenai`, `aanthropic` and `arecord` run each call in a worker thread; on the embedded
store that used to fail on the first call ("SQLite objects created in a thread can only be
used in that same thread"). A long async loop must store exactly what the same loop run
synchronously stores, and a reopened session must build the same next request.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ctxrules.engine.context import Context
from ctxrules.testing.responses import anthropic_response, openai_response
from ctxrules.tokens import HeuristicCounter

SIZES = (0, 30, 2_500, 40_000)


def _reply(turn: int, provider: str) -> dict[str, object]:
    calls = [(f"t{turn}", "read_file", {"n": turn})]
    if provider == "anthropic":
        return anthropic_response(turn, f"Step {turn}.", calls, (500 + turn, 0))
    return openai_response(turn, f"Step {turn}.", calls, (500 + turn, 0))


def _context(store: str, model: str) -> Context:
    return Context(
        model=model,
        window=16_000,
        store=store,
        session="async",
        tokenizer=HeuristicCounter(),
        clock=lambda: 100.0,
    )


async def _async_loop(ctx: Context, turns: int, provider: str) -> list[object]:
    requests: list[object] = []
    for turn in range(turns):
        ctx.add({"role": "user", "content": f"task {turn}"})
        request = await (ctx.aanthropic() if provider == "anthropic" else ctx.aopenai())
        requests.append(request["messages"])
        reply = await ctx.arecord(_reply(turn, provider))
        size = SIZES[turn % len(SIZES)]
        ctx.add_tool_result(reply.tool_calls[0].id, ("x" * size) or "(empty)")
    return requests


def _sync_loop(ctx: Context, turns: int, provider: str) -> list[object]:
    requests: list[object] = []
    for turn in range(turns):
        ctx.add({"role": "user", "content": f"task {turn}"})
        request = ctx.anthropic() if provider == "anthropic" else ctx.openai()
        requests.append(request["messages"])
        reply = ctx.record(_reply(turn, provider))
        size = SIZES[turn % len(SIZES)]
        ctx.add_tool_result(reply.tool_calls[0].id, ("x" * size) or "(empty)")
    return requests


@pytest.mark.parametrize(
    ("provider", "model"), [("openai", "gpt-4o"), ("anthropic", "claude-sonnet-4-5")]
)
def test_an_async_loop_on_the_embedded_store_matches_the_sync_one(
    tmp_path: Path, provider: str, model: str
) -> None:
    """40 async turns store what 40 sync turns store, and both reopen to the same request."""
    async_path, sync_path = str(tmp_path / "async.sqlite"), str(tmp_path / "sync.sqlite")
    with _context(async_path, model) as ctx:
        async_requests = asyncio.run(_async_loop(ctx, 40, provider))
        async_graph = ctx.session.graph
    with _context(sync_path, model) as ctx:
        sync_requests = _sync_loop(ctx, 40, provider)
        assert ctx.session.graph == async_graph
    assert async_requests == sync_requests
    nexts = []
    for path in (async_path, sync_path):
        with _context(path, model) as reopened:
            assert reopened.session.graph == async_graph
            reopened.add({"role": "user", "content": "and now?"})
            nexts.append(reopened.anthropic() if provider == "anthropic" else reopened.openai())
    assert nexts[0] == nexts[1]


def test_concurrent_async_calls_on_one_store_do_not_interleave(tmp_path: Path) -> None:
    """Two sessions on one open store, driven at once from one event loop, both stored whole."""
    from ctxrules.store import open_store  # noqa: PLC0415 - only this test shares a store

    store = open_store(str(tmp_path / "shared.sqlite")).unwrap()
    a = Context(model="gpt-4o", window=16_000, store=store, session="a", clock=lambda: 1.0)
    b = Context(model="gpt-4o", window=16_000, store=store, session="b", clock=lambda: 1.0)

    async def both() -> None:
        await asyncio.gather(_async_loop(a, 15, "openai"), _async_loop(b, 15, "openai"))

    asyncio.run(both())
    for ctx in (a, b):
        ctx.close()  # stores the last turn's reply and result (stored per turn)
        stored = store.load_session(ctx.session.session_id).unwrap()
        assert stored.graph == ctx.session.graph
        assert stored.head == ctx.session.head
    store.close()


def test_150_async_calls_then_a_restart_continue_as_an_uninterrupted_run(tmp_path: Path) -> None:
    """Issue 28: 150 ``aopenai`` calls on SQLite, a new process's `Context`, the same request."""
    path = str(tmp_path / "long.sqlite")
    with _context(path, "gpt-4o") as ctx:
        asyncio.run(_async_loop(ctx, 150, "openai"))
    uninterrupted = Context(
        model="gpt-4o",
        window=16_000,
        session="async",
        tokenizer=HeuristicCounter(),
        clock=lambda: 100.0,
    )
    asyncio.run(_async_loop(uninterrupted, 150, "openai"))
    uninterrupted.add({"role": "user", "content": "and now?"})
    with _context(path, "gpt-4o") as reopened:
        reopened.add({"role": "user", "content": "and now?"})
        assert reopened.openai() == uninterrupted.openai()
