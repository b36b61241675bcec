"""Extended thinking: a reply's reasoning blocks go back to the model verbatim, as the API requires.

With ``thinking`` enabled, the Messages API answers 400 when the assistant message of a tool
loop does not start with its thinking block, or when a block's signature does not match its
text. `FakeAnthropic` keeps those rules, so these loops fail wherever the blocks are dropped,
changed or marked.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import ctxrules
from ctxrules.commit import ContextItem
from ctxrules.commit.item import stored_item
from ctxrules.render import Message, TextBlock, ThinkingBlock, to_anthropic
from ctxrules.render.item import render_item, thinking_json

pytest.importorskip("anthropic")

from ctxrules.testing.fake_sdk import FakeAnthropic

THINKING = {"type": "enabled", "budget_tokens": 2048}
TOOLS = [{"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}}]


def _script(turns: int) -> list[Any]:
    # Every turn calls a tool but the last; every seventh turn answers in text, ending a loop.
    return [
        "Done." if n == turns - 1 else ("Noted." if n % 7 == 6 else [("read_file", {"n": n})])
        for n in range(turns)
    ]


def _output(n: int) -> str:
    # Outputs from a line to ~40 kB, so results are capped, aged and folded at an 8k window.
    return f"def f{n}():\n    return {n}\n" * (1 + (n * 37) % 1_200)


def _assistant_messages(request: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [m["content"] for m in request["messages"] if m["role"] == "assistant"]


def _drive(ctx: ctxrules.Context, client: FakeAnthropic, turns: int) -> int:
    """An agent loop; returns how many requests sent some reasoning block back."""
    ctx.add({"role": "user", "content": "Read the files one by one."})
    with_thinking = 0
    for n in range(turns):
        request = ctx.anthropic(max_tokens=4096, thinking=THINKING)
        with_thinking += any(
            block.get("type") == "thinking"
            for content in _assistant_messages(request)
            for block in content
        )
        reply = ctx.record(client.messages.create(**request))
        for call in reply.tool_calls:
            ctx.add_tool_result(call.id, _output(n))
        if not reply.tool_calls and n < turns - 1:
            ctx.add({"role": "user", "content": f"Go on with step {n}."})
    return with_thinking


def test_a_long_thinking_loop_is_accepted_at_every_call(tmp_path: Path) -> None:
    """80 calls at an 8k window, the store reopened every 9: every request passes the API's checks."""
    turns, store = 80, tmp_path / "s.db"
    client = FakeAnthropic(_script(turns))
    ctx = ctxrules.Context(
        "default", model="claude-sonnet-4-5", window=8_000, tools=TOOLS, store=store
    )
    compactions = 0
    ctx.add({"role": "user", "content": "Read the files one by one."})
    for n in range(turns):
        if n and n % 9 == 0:
            ctx.close()
            ctx = ctxrules.Context(
                "default", model="claude-sonnet-4-5", window=8_000, tools=TOOLS, store=store
            )
        request = ctx.anthropic(max_tokens=4096, thinking=THINKING)
        assert ctx.last is not None
        compactions += any(s.startswith("compact:finished") for s in ctx.last.decision_path)
        reply = ctx.record(client.messages.create(**request))
        for call in reply.tool_calls:
            ctx.add_tool_result(call.id, _output(n))
        if not reply.tool_calls and n < turns - 1:
            ctx.add({"role": "user", "content": f"Go on with step {n}."})
    ctx.close()
    assert len(client.requests) == turns
    assert compactions >= 1  # the loop went through what a long session meets


def test_the_blocks_go_back_verbatim_and_first() -> None:
    """Each reply's blocks lead its assistant message in every later request, unmarked."""
    client = FakeAnthropic(_script(6))
    ctx = ctxrules.Context("default", model="claude-sonnet-4-5", tools=TOOLS)
    assert _drive(ctx, client, 6) == 5
    sent = _assistant_messages(client.requests[-1])
    replies = client.requests[1:]
    assert len(sent) == 5
    for content in sent:
        assert content[0]["type"] == "thinking"
        assert not any("cache_control" in block for block in content if block["type"] == "thinking")
    # The first reply's block, as the fake returned it, in every later request.
    first = _assistant_messages(replies[0])[0][0]
    assert all(_assistant_messages(r)[0][0] == first for r in replies)


def test_openai_requests_send_no_reasoning_blocks() -> None:
    """Chat Completions has no reasoning blocks: the same session's OpenAI request holds none."""
    client = FakeAnthropic(_script(3))
    ctx = ctxrules.Context("default", model="claude-sonnet-4-5", tools=TOOLS)
    _drive(ctx, client, 3)
    text = json.dumps(ctx.openai()["messages"])
    assert "signature" not in text
    assert "what the request asks" not in text


def test_thinking_counts_toward_the_request() -> None:
    """The blocks are counted, so a request that sends them stays within the window."""
    thought = "weigh the options " * 300
    blocks = [{"type": "thinking", "thinking": thought, "signature": "s"}]
    plain = ContextItem("a", "assistant", rendered="Reading.")
    thinking = ContextItem("a", "assistant", rendered="Reading.", thinking=thinking_json(blocks))
    from ctxrules.render import item_tokens  # noqa: PLC0415 - beside its use
    from ctxrules.tokens import default_tokenizer  # noqa: PLC0415

    ruler = default_tokenizer()
    assert item_tokens(thinking, ruler) - item_tokens(plain, ruler) >= ruler.count(thought)


def test_an_item_without_thinking_keeps_its_stored_form_and_digest() -> None:
    """Items stored before reasoning blocks existed read back with the same digest."""
    item = ContextItem("a", "assistant", rendered="hi")
    assert "thinking" not in item.to_json()
    blocks = [{"type": "redacted_thinking", "data": "EncRypted"}]
    kept = ContextItem("a", "assistant", rendered="hi", thinking=thinking_json(blocks))
    assert kept.digest != item.digest
    assert stored_item(kept.to_json(), kept.digest) == kept
    assert stored_item(item.to_json(), item.digest).thinking == ""


def test_added_assistant_messages_keep_their_blocks_too() -> None:
    """A host that builds the reply itself (from streamed events) adds it with `add`."""
    thought = "Turn 1: what the request asks, and the next step."
    client = FakeAnthropic(["ok"])
    signed = client.create(
        model="claude-sonnet-4-5",
        max_tokens=10,
        thinking=THINKING,
        messages=[{"role": "user", "content": "hi"}],
    ).model_dump()
    assert signed["content"][0]["thinking"] == thought
    ctx = ctxrules.Context("default", model="claude-sonnet-4-5", tools=TOOLS)
    ctx.add({"role": "user", "content": "Read a.py."})
    use = {"type": "tool_use", "id": "toolu_9", "name": "read_file", "input": {}}
    ctx.add({"role": "assistant", "content": [signed["content"][0], use]})
    ctx.add_tool_result("toolu_9", "print(1)")
    request = ctx.anthropic(thinking=THINKING)
    assert request["messages"][1]["content"][0] == signed["content"][0]


def test_no_breakpoint_lands_on_a_reasoning_block() -> None:
    """The API refuses cache_control on a reasoning block: the mark goes on the block before."""
    block = ThinkingBlock('{"data":"x","type":"redacted_thinking"}', "x")
    messages = [
        Message("user", (TextBlock("hi"),)),
        Message("assistant", (block,)),
    ]
    request = to_anthropic(messages, cache_prefix_end=1, cache_newest=True)
    assert request.messages[1]["content"] == [{"data": "x", "type": "redacted_thinking"}]
    assert "cache_control" in request.messages[0]["content"][-1]  # type: ignore[index]


def test_a_malformed_thinking_field_renders_no_block() -> None:
    """A hand-edited item with a broken field renders its text, not an exception."""
    item = ContextItem("a", "assistant", rendered="hi", thinking="{not json")
    assert render_item(item)[0].blocks == (TextBlock("hi"),)


def test_an_async_loop_sends_them_back_too() -> None:
    """`aanthropic` and `arecord` keep them as the sync calls do."""
    client = FakeAnthropic(_script(5))
    ctx = ctxrules.Context("default", model="claude-sonnet-4-5", tools=TOOLS)

    async def loop() -> None:
        ctx.add({"role": "user", "content": "Read."})
        for n in range(5):
            request = await ctx.aanthropic(thinking=THINKING)
            reply = await ctx.arecord(client.messages.create(**request))
            for call in reply.tool_calls:
                ctx.add_tool_result(call.id, _output(n))

    asyncio.run(loop())
    assert len(client.requests) == 5


def test_long_thoughts_at_a_small_window_keep_the_loop_valid(tmp_path: Path) -> None:
    """Thoughts of ~3,300 tokens at an 8k window: snip drops old replies whole, never a reasoning half."""
    turns = 40
    client = FakeAnthropic(
        [[("read_file", {"n": n})] for n in range(turns)],
        thought=lambda turn: f"Turn {turn}." + " weigh" * 3_300,
    )
    ctx = ctxrules.Context(
        "default", model="claude-sonnet-4-5", window=8_000, tools=TOOLS, store=tmp_path / "s.db"
    )
    ctx.add({"role": "user", "content": "Read the files one by one."})
    snipped = 0
    for n in range(turns):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ctxrules.ContextWarning)  # the cut is said each time
            request = ctx.anthropic(max_tokens=2_500, thinking=THINKING)
        assert ctx.last is not None
        snipped += any(s.startswith("snip:") for s in ctx.last.decision_path)
        assert ctx.last.request_tokens <= 8_000 - 2_500
        reply = ctx.record(client.messages.create(**request))
        ctx.add_tool_result(reply.tool_calls[0].id, _output(n))
    assert snipped >= turns // 2  # the window only fits a reply or two: snip worked hard


def test_snip_drops_a_reasoning_reply_with_its_calls() -> None:
    """A unit is a reply's reasoning, its calls and their results: dropped or kept together."""
    from ctxrules.compaction.snip import snip  # noqa: PLC0415 - beside its use
    from ctxrules.render import ToolResultBlock, ToolUseBlock  # noqa: PLC0415
    from ctxrules.tokens import HeuristicCounter  # noqa: PLC0415

    def reply(n: int) -> list[Message]:
        thought = ThinkingBlock(f'{{"n":{n}}}', "think " * 200)
        return [
            Message("assistant", (thought,)),
            Message("assistant", (ToolUseBlock(f"c{n}", "ls", "{}"),)),
            Message("tool", (ToolResultBlock(f"c{n}", "a.py"),)),
        ]

    messages = [Message("user", (TextBlock("List."),)), *reply(1), *reply(2), *reply(3)]
    out = snip(messages, 500, HeuristicCounter(), keep_first=0).messages
    for at, message in enumerate(out):
        if message.role == "assistant" and isinstance(message.blocks[0], ToolUseBlock):
            assert isinstance(out[at - 1].blocks[0], ThinkingBlock), [m.role for m in out]
    assert len(out) < len(messages)
    assert out[-3:] == tuple(reply(3))


def test_show_and_the_inspector_name_a_replys_thinking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reply that only thought and called a tool is listed by its thinking, not as blank."""
    from ctxrules.cli.main import main  # noqa: PLC0415 - beside its use
    from ctxrules.inspect.views import ItemTable  # noqa: PLC0415

    store = tmp_path / "s.db"
    client = FakeAnthropic(_script(3), thought=lambda _turn: "x" * 1_234)
    with ctxrules.Context("default", model="claude-sonnet-4-5", tools=TOOLS, store=store) as ctx:
        _drive(ctx, client, 3)
        assert ctx.last is not None
        table = ItemTable()
        rows = [table.rows[table.add(item)] for item in ctx.last.commit.items]
    assert main(["show", str(store), "main", "--limit", "0"]) == 0
    assert "assistant new  [thinking: 1,234 chars]" in capsys.readouterr().out
    assert next(r["text"] for r in rows if r["role"] == "assistant") == "[thinking: 1,234 chars]"


def test_a_reply_with_redacted_thinking_records_without_a_warning() -> None:
    """Redacted thinking is kept and sent back, so `record` does not call it left out."""
    ctx = ctxrules.Context("default", model="claude-sonnet-4-5", tools=TOOLS)
    ctx.add({"role": "user", "content": "Read a.py."})
    ctx.anthropic(thinking=THINKING)
    content = [
        {"type": "redacted_thinking", "data": "EncRypted"},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}},
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ctx.record({"type": "message", "role": "assistant", "content": content})
    ctx.add_tool_result("toolu_1", "print(1)")
    assert ctx.anthropic(thinking=THINKING)["messages"][1]["content"][0] == content[0]  # type: ignore[index]
