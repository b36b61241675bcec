"""`Context` turns beside LangChain's `trim_messages`, in one process, in CPU time.

    python bench/context_turns.py                     # 1k, 10k and 100k messages
    python bench/context_turns.py --sizes 1000 10000  # chosen sizes
    python bench/context_turns.py --async             # aopenai() instead of openai()

A turn is what an agent loop calls through `Context`, with no store: add a user message,
record a response with a tool call, add the tool's result, then ``openai()`` (or
``await aopenai()``). The session is grown through the same calls (``openai()`` at every
turn up to 10k messages and every ``size // 10_000`` turns beyond) with a stand-in
summarizer at a 200k window; the peer trims the same messages, as LangChain messages, to
the same input budget with the same ruler. Rounds of the two are interleaved and timed
with ``time.process_time``; figures are medians, and the mean turn beside them (it holds
the batch points and compactions a loop meets). docs/performance.md quotes the output.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs

from ctxrules import Context

HERE = Path(__file__).resolve().parent
WINDOW = 200_000
SUMMARY = "The user and the assistant read, grepped and edited files of the project, turn by turn."
#: Timed rounds per size: Context turns, and (fewer, they take seconds) trim_messages calls.
#: Hundreds of turns, so the mean holds several batch points (one every 32 turns at most):
#: 40 turns held one or two, and their mean depended on where the window fell.
ROUNDS = {1_000: (300, 10), 10_000: (300, 4), 100_000: (150, 2)}


def fixtures() -> ModuleType:
    """bench/conftest.py as a module: the text, ruler and peer of the other benchmarks."""
    spec = importlib.util.spec_from_file_location("ctxrules_bench_conftest", HERE / "conftest.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@attrs.define
class Loop:
    """A `Context` grown turn by turn, and the same messages as a LangChain user keeps them."""

    bench: ModuleType
    ctx: Context
    peer: list[Any] = attrs.field(factory=list)
    turn: int = 0
    now: float = 0.0

    def messages(self) -> int:
        """Messages in the session (every node of its graph)."""
        return len(self.ctx.session.graph)

    def add_turn(self, *, peer: bool) -> None:
        """One turn's three messages: the user's, the reply calling a tool, the result."""
        bench, turn = self.bench, self.turn
        self.now = turn * bench.SECONDS_PER_TURN
        call_id = f"call_{turn}"
        user, reply = bench.text(3 * turn, 2), bench.text(3 * turn + 1, 3)
        lines = bench.RESULT_LINES[turn % len(bench.RESULT_LINES)]
        result = bench.text(3 * turn + 2, lines)
        path = f'{{"path": "src/pkg{turn % 37}/mod_{turn}.py"}}'
        tool = bench.TOOLS[turn % len(bench.TOOLS)]
        self.ctx.add({"role": "user", "content": user})
        self.ctx.record(
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "content": reply,
                            "tool_calls": [
                                {
                                    "id": call_id,
                                    "type": "function",
                                    "function": {"name": tool, "arguments": path},
                                }
                            ],
                        }
                    }
                ]
            }
        )
        self.ctx.add({"role": "tool", "tool_call_id": call_id, "content": result})
        if peer:
            from langchain_core.messages import (  # noqa: PLC0415 - optional peer
                AIMessage,
                HumanMessage,
                ToolMessage,
            )

            args = {"path": f"src/pkg{turn % 37}/mod_{turn}.py"}
            self.peer += [
                HumanMessage(content=user),
                AIMessage(content=reply, tool_calls=[{"id": call_id, "name": tool, "args": args}]),
                ToolMessage(content=result, tool_call_id=call_id),
            ]
        self.turn += 1


def grow(bench: ModuleType, size: int, *, peer: bool) -> Loop:
    """A `Context` session of at least ``size`` messages, prepared as an agent prepares it."""
    clock = [0.0]
    ctx = Context(
        "default",
        model="gpt-4o",
        window=WINDOW,
        tokenizer=bench.RULER,
        summarizer=lambda _: SUMMARY,
        clock=lambda: clock[0],
    )
    loop = Loop(bench, ctx)
    every = max(size // 10_000, 1)
    gc.disable()
    try:
        while loop.messages() < size:
            loop.add_turn(peer=peer)
            clock[0] = loop.now
            if loop.turn % every == 0 or loop.messages() + 3 * every >= size:
                ctx.openai()
    finally:
        gc.enable()
        gc.collect()
    # Later turns read the clock the loop keeps.
    ctx.clock = lambda: loop.now
    return loop


def context_turn(loop: Loop) -> Callable[[], object]:
    """One timed turn: three messages added, then ``openai()``."""

    def turn() -> object:
        loop.add_turn(peer=False)
        return loop.ctx.openai()

    return turn


def async_turn(loop: Loop) -> Callable[[], Awaitable[object]]:
    """One timed turn of an async agent: three messages added, then ``await aopenai()``."""

    async def turn() -> object:
        loop.add_turn(peer=False)
        return await loop.ctx.aopenai()

    return turn


def cpu(work: Callable[[], object]) -> float:
    """CPU seconds of one call of ``work`` (this process, every thread)."""
    started = time.process_time()
    work()
    return time.process_time() - started


async def acpu(work: Callable[[], Awaitable[object]]) -> float:
    """CPU seconds of one awaited call of ``work`` (the worker thread's included)."""
    started = time.process_time()
    await work()
    return time.process_time() - started


def measure(bench: ModuleType, size: int, *, use_async: bool, with_peer: bool) -> dict[str, Any]:
    """Median CPU seconds of a `Context` turn and of a `trim_messages` call at ``size``."""
    loop = grow(bench, size, peer=with_peer)
    trim: Callable[[], object] | None = None
    if with_peer:
        from langchain_core.messages import trim_messages  # noqa: PLC0415 - optional peer

        peer, messages = bench.Peer(trim_messages), list(loop.peer)
        trim = lambda: peer.trim(messages)  # noqa: E731 - named for the loop below
    grown = loop.messages()
    turns, trims = ROUNDS.get(size, ROUNDS[10_000])
    every = max(turns // trims, 1)
    ctx_times: list[float] = []
    peer_times: list[float] = []

    def after(index: int) -> None:
        # Interleaved: the peer's calls land between the turns, under the same conditions.
        if trim is not None and index % every == 0 and len(peer_times) < trims:
            peer_times.append(cpu(trim))

    if use_async:

        async def rounds() -> None:
            turn = async_turn(loop)
            for _ in range(3):
                await turn()  # warm: the first turns after growing may catch up on commits
            for index in range(turns):
                ctx_times.append(await acpu(turn))
                after(index)

        asyncio.run(rounds())
    else:
        turn = context_turn(loop)
        for _ in range(3):
            turn()
        for index in range(turns):
            ctx_times.append(cpu(turn))
            after(index)
    sent = loop.ctx.last
    return {
        "size": size,
        "messages": grown,
        "sent": len(sent.messages) if sent is not None else 0,
        "turn": statistics.median(ctx_times),
        "turn_mean": statistics.fmean(ctx_times),
        "trim": statistics.median(peer_times) if peer_times else None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print one row per size: the turn, the peer, their ratio, and the scaling from the first."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--async", dest="use_async", action="store_true", help="aopenai()")
    parser.add_argument("--no-peer", action="store_true", help="time Context turns only")
    args = parser.parse_args(argv)
    bench = fixtures()
    kind = "aopenai" if args.use_async else "openai"
    sys.stdout.write(
        f"| messages | Context turn ({kind}) | mean | trim_messages | ratio | ratio (mean) |\n"
    )
    first: float | None = None
    first_mean: float | None = None
    for size in args.sizes:
        row = measure(bench, size, use_async=args.use_async, with_peer=not args.no_peer)
        first = first or row["turn"]
        trim = row["trim"]
        ratio = f"{trim / row['turn']:,.0f}x" if trim else "-"
        by_mean = f"{trim / row['turn_mean']:,.0f}x" if trim else "-"
        first_mean = first_mean or row["turn_mean"]
        sys.stdout.write(
            f"| {row['messages']:,} | {row['turn'] * 1e3:.2f} ms | {row['turn_mean'] * 1e3:.2f} ms"
            f" | {'-' if trim is None else f'{trim * 1e3:.0f} ms'} | {ratio} | {by_mean} |"
            f" ({row['turn'] / first:.2f}x the first size, {row['turn_mean'] / first_mean:.2f}x by"
            f" the mean; {row['sent']} messages sent)\n"
        )
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
