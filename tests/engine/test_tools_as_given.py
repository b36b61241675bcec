"""Tool definitions reach the provider as given: strict mode, cache breakpoints and server tools."""

from __future__ import annotations

import pytest

import ctxrules

pytest.importorskip("openai")
pytest.importorskip("anthropic")

from ctxrules.testing.fake_sdk import FakeAnthropic, FakeOpenAI

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
    "additionalProperties": False,
}
STRICT_OPENAI = {
    "type": "function",
    "function": {"name": "read_file", "description": "Read", "parameters": SCHEMA, "strict": True},
}
CACHED_ANTHROPIC = {
    "name": "read_file",
    "description": "Read",
    "input_schema": SCHEMA,
    "cache_control": {"type": "ephemeral"},
}
WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}


def test_an_openai_tool_keeps_strict_mode() -> None:
    """``strict`` makes the model's arguments match the schema: dropping it silently loosened them."""
    client = FakeOpenAI(["ok"])
    ctx = ctxrules.Context("default", model="gpt-4o", tools=[STRICT_OPENAI])
    ctx.add({"role": "user", "content": "Read a.py."})
    request = ctx.openai()
    client.chat.completions.create(**request)
    assert request["tools"] == [STRICT_OPENAI]
    # Converted for Anthropic, the flag goes with it.
    assert ctx.anthropic()["tools"][0]["strict"] is True  # type: ignore[index]


def test_anthropic_tools_keep_their_breakpoint_and_server_tools_stay_server_tools() -> None:
    """A server tool sent as a client tool named web_search is one the loop could never run."""
    client = FakeAnthropic(["ok"])
    ctx = ctxrules.Context(
        "default",
        model="claude-sonnet-4-5",
        system="Be brief.",
        tools=[CACHED_ANTHROPIC, WEB_SEARCH],
    )
    ctx.add({"role": "user", "content": "What changed in Python 3.14?"})
    request = ctx.anthropic()
    client.messages.create(**request)  # three breakpoints: the tools' and ctxrules's two
    assert request["tools"] == [CACHED_ANTHROPIC, WEB_SEARCH]
    # Chat Completions has no such tool: it is left out there, the client tool converted.
    assert [t["function"]["name"] for t in ctx.openai()["tools"]] == ["read_file"]  # type: ignore[index]
