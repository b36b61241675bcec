"""A 1-hour prompt cache through `Context.anthropic`: ``cache_control=`` goes on its breakpoints.

Sent as a top-level parameter, the API adds its own breakpoint at the end of the request,
after the two 5-minute ones ctxrules places; it refuses a 1-hour breakpoint after a
5-minute one (400), so every such request failed. `FakeAnthropic` keeps that rule.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import ctxrules

pytest.importorskip("anthropic")

from ctxrules.testing.fake_sdk import FakeAnthropic

HOUR = {"type": "ephemeral", "ttl": "1h"}
TOOLS = [{"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}}]


def _controls(request: dict[str, Any]) -> list[object]:
    blocks = [*request.get("system", ()), *(b for m in request["messages"] for b in m["content"])]
    return [block["cache_control"] for block in blocks if "cache_control" in block]


def test_a_loop_with_a_one_hour_cache_is_accepted_at_every_call(tmp_path: Path) -> None:
    """30 calls, the store reopened every 7: each request has two 1-hour breakpoints, nothing top-level."""
    turns, store = 30, tmp_path / "s.db"
    script: list[Any] = [[("read_file", {"n": n})] for n in range(turns - 1)] + ["Done."]
    client = FakeAnthropic(script)

    def context() -> ctxrules.Context:
        return ctxrules.Context(
            model="claude-sonnet-4-5", system="Be brief.", tools=TOOLS, store=store
        )

    ctx = context()
    ctx.add({"role": "user", "content": "Read the files."})
    for n in range(turns):
        if n and n % 7 == 0:
            ctx.close()
            ctx = context()
        request = ctx.anthropic(cache_control=HOUR)
        assert "cache_control" not in request
        assert _controls(request) == [HOUR, HOUR]
        reply = ctx.record(client.messages.create(**request))
        for call in reply.tool_calls:
            ctx.add_tool_result(call.id, f"file {n}")
    ctx.close()
    assert len(client.requests) == turns


def test_aanthropic_sets_it_too_and_later_requests_are_not_changed() -> None:
    """The async call; a later request without it has the 5-minute breakpoints, as before."""
    ctx = ctxrules.Context(model="claude-sonnet-4-5", system="Be brief.")
    ctx.add({"role": "user", "content": "Hello."})
    FakeAnthropic(["Hi."]).messages.create(**asyncio.run(ctx.aanthropic(cache_control=HOUR)))
    assert _controls(asyncio.run(ctx.aanthropic(cache_control=HOUR))) == [HOUR, HOUR]
    assert _controls(ctx.anthropic()) == [{"type": "ephemeral"}] * 2


def test_the_fake_refuses_what_the_api_refuses_of_breakpoints() -> None:
    """A 1-hour breakpoint after a 5-minute one, and a fifth breakpoint, are 400s."""
    five = {"type": "ephemeral"}
    text = [{"type": "text", "text": f"part {n}", "cache_control": five} for n in range(4)]
    base: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 64}
    with pytest.raises(ValueError, match="must not come after"):
        FakeAnthropic(["x"]).messages.create(
            **base, messages=[{"role": "user", "content": text[:1]}], cache_control=HOUR
        )
    with pytest.raises(ValueError, match="A maximum of 4 blocks"):
        FakeAnthropic(["x"]).messages.create(
            **base, messages=[{"role": "user", "content": text}], cache_control=five
        )
