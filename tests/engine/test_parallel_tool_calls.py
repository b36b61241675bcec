"""Parallel tool calls of one reply go back as the reply made them: one message of uses, one of results.

Each call renders as its own use and result, so a reply's calls came back as one turn per
call. With extended thinking on, the Messages API refuses that (400: the final assistant
message, the second call's, does not start with a thinking block); `FakeAnthropic` keeps
that rule, so these loops fail wherever a reasoning reply's calls are split.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ctxrules
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.commit.vector import CHUNK
from ctxrules.render import render_commit, to_anthropic
from ctxrules.render.item import thinking_json

pytest.importorskip("anthropic")

from ctxrules.testing.fake_sdk import FakeAnthropic

THINKING = {"type": "enabled", "budget_tokens": 2048}
TOOLS = [{"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}}]
MODEL = "claude-sonnet-4-5"


def _script(turns: int) -> list[Any]:
    # One to three calls a reply; every seventh turn answers in text; the last one ends.
    return [
        "Done."
        if n == turns - 1
        else (
            "Noted." if n % 7 == 6 else [("read_file", {"n": n, "k": k}) for k in range(1 + n % 3)]
        )
        for n in range(turns)
    ]


def _output(n: int, k: int) -> str:
    # Outputs from a line to ~20 kB, so results are capped, aged and folded at an 8k window.
    return f"def f{n}_{k}():\n    return {n}\n" * (1 + (n * 37 + k * 11) % 600)


def _step(ctx: ctxrules.Context, reply: ctxrules.Reply, n: int, turns: int) -> None:
    # Results in reverse order: a loop that runs calls concurrently hands them back as they end.
    for k, call in reversed(list(enumerate(reply.tool_calls))):
        ctx.add_tool_result(call.id, _output(n, k))
    if not reply.tool_calls and n < turns - 1:
        ctx.add({"role": "user", "content": f"Go on with step {n}."})


def _context(store: Path | None) -> ctxrules.Context:
    return ctxrules.Context("default", model=MODEL, window=8_000, tools=TOOLS, store=store)


def _long_thought(turn: int) -> str:
    # About 3,300 tokens: at an 8k window most requests are snipped (plain messages, no items).
    return f"Turn {turn}: " + "weigh the files and the order to read them. " * 330


@pytest.mark.filterwarnings("ignore::ctxrules.ContextWarning")  # the snipped requests say so
@pytest.mark.parametrize("thought", [None, _long_thought], ids=["short", "snipped"])
def test_a_thinking_loop_with_parallel_calls_is_accepted_at_every_call(
    tmp_path: Path, thought: Callable[[int], str] | None
) -> None:
    """60 calls of up to three calls each at an 8k window, the store reopened every 9: all accepted."""
    turns, store = 60, tmp_path / "s.db"
    client = FakeAnthropic(_script(turns), thought=thought)
    ctx = _context(store)
    ctx.add({"role": "user", "content": "Read the files, several at a time."})
    for n in range(turns):
        if n and n % 9 == 0:
            ctx.close()
            ctx = _context(store)
        reply = ctx.record(client.messages.create(**ctx.anthropic(thinking=THINKING)))
        _step(ctx, reply, n, turns)
    ctx.close()
    assert len(client.requests) == turns


def test_an_async_thinking_loop_with_parallel_calls_is_accepted() -> None:
    """The same through aanthropic and arecord, with no store."""
    turns = 30
    client = FakeAnthropic(_script(turns))

    async def main() -> None:
        ctx = _context(None)
        ctx.add({"role": "user", "content": "Read the files, several at a time."})
        for n in range(turns):
            request = await ctx.aanthropic(thinking=THINKING)
            reply = await ctx.arecord(client.messages.create(**request))
            _step(ctx, reply, n, turns)

    asyncio.run(main())
    assert len(client.requests) == turns


def test_the_reply_and_its_calls_are_one_message_and_the_results_the_next() -> None:
    """Two calls: the reply's thinking, both uses; then both results, in the order of the calls."""
    client = FakeAnthropic([[("read_file", {"p": 1}), ("read_file", {"p": 2})], "Both read."])
    ctx = ctxrules.Context(model=MODEL, tools=TOOLS)
    ctx.add({"role": "user", "content": "Read both."})
    reply = ctx.record(client.messages.create(**ctx.anthropic(thinking=THINKING)))
    for call in reversed(reply.tool_calls):
        ctx.add_tool_result(call.id, f"text of {call.id}")
    client.messages.create(**ctx.anthropic(thinking=THINKING))
    _, uses, results = client.requests[-1]["messages"]
    assert [b["type"] for b in uses["content"]] == ["thinking", "tool_use", "tool_use"]
    ids = [b["id"] for b in uses["content"][1:]]
    assert [b["tool_use_id"] for b in results["content"]] == ids
    assert results["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_without_reasoning_blocks_the_request_is_unchanged() -> None:
    """No thinking: parallel calls go as before (one turn per call), which the API accepts."""
    client = FakeAnthropic([[("read_file", {"p": 1}), ("read_file", {"p": 2})], "Both read."])
    ctx = ctxrules.Context(model=MODEL, tools=TOOLS)
    ctx.add({"role": "user", "content": "Read both."})
    reply = ctx.record(client.messages.create(**ctx.anthropic()))
    for call in reply.tool_calls:
        ctx.add_tool_result(call.id, "ok")
    roles = [m["role"] for m in ctx.anthropic()["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]


def _reasoning_reply(n: int, calls: int) -> list[ContextItem]:
    """A reply with a thinking block and ``calls`` tool calls, as a commit holds it."""
    thought = [{"type": "thinking", "thinking": f"plan {n}", "signature": f"s{n}"}]
    reply = ContextItem(f"a{n}", "assistant", rendered="", thinking=thinking_json(thought), turn=n)
    return [reply] + [
        ContextItem(
            f"t{n}.{k}",
            "tool",
            rendered=f"out {k}",
            tool_name="ls",
            tool_call_id=f"c{n}_{k}",
            turn=n,
        )
        for k in range(calls)
    ]


@pytest.mark.parametrize("before", [CHUNK - 3, CHUNK - 2, CHUNK - 1])
def test_a_reply_whose_calls_cross_a_chunk_end_is_joined_on_every_path(before: int) -> None:
    """The chunk join, the item-by-item gathering and plain messages (a snipped request) agree."""
    items = [ContextItem(f"u{n}", "user", rendered=f"user {n}") for n in range(before)]
    items += _reasoning_reply(1, 4)
    items.append(ContextItem("u-last", "user", rendered="and then?"))
    rendered = render_commit(ContextCommit("s").append_items(items))
    assert len(rendered.spans) == 2  # the reply's calls are in both chunks
    for _ in range(2):  # gathered, then from the kept chunks
        joined = to_anthropic(rendered, cache_system=True, cache_newest=True)
        assert joined == to_anthropic(tuple(rendered), cache_system=True, cache_newest=True)
        uses, results = joined.messages[-2:]
        assert [b["type"] for b in uses["content"]] == ["thinking", *["tool_use"] * 4]
        kinds = [b["type"] for b in results["content"]]  # type: ignore[index]
        assert kinds == [*["tool_result"] * 4, "text"]
