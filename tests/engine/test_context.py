"""`Context`: SDK-shaped requests that validate against the SDK types, responses recorded right."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from anthropic.types import Message as AnthropicMessage
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat import ChatCompletion
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses import Response
from pydantic import TypeAdapter

from ctxrules.engine.context import ConfigError, Context, InputError
from ctxrules.render import Message, TextBlock
from ctxrules.testing.fake_sdk import materialized
from ctxrules.tokens import HeuristicCounter
from ctxrules.tokens.usage import ProviderUsage, UsageState

# Kept alive for the module: pydantic validates iterable fields lazily (see the adapter tests).
OPENAI_REQUEST = TypeAdapter(CompletionCreateParamsNonStreaming)
ANTHROPIC_REQUEST = TypeAdapter(MessageCreateParamsNonStreaming)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


def _chat(
    content: str | None, calls: list[tuple[str, str]] = (), cached: int = 0
) -> ChatCompletion:  # type: ignore[assignment]
    return ChatCompletion.model_validate(
        {
            "id": "r",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if calls else "stop",
                    "message": {
                        "role": "assistant",
                        "content": content,
                        "tool_calls": [
                            {
                                "id": i,
                                "type": "function",
                                "function": {
                                    "name": "read_file",
                                    "arguments": json.dumps({"path": p}),
                                },
                            }
                            for i, p in calls
                        ]
                        or None,
                    },
                }
            ],
            "usage": {
                "prompt_tokens": 1005,
                "completion_tokens": 7,
                "total_tokens": 1012,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }
    )


def _context(**options: Any) -> Context:
    clock = options.pop("clock", lambda: 1_000.0)
    return Context(
        model=options.pop("model", "gpt-4o"),
        tokenizer=HeuristicCounter(),
        clock=clock,
        **options,
    )


def test_from_openai_counts_cached_prompt_tokens_once() -> None:
    """900 cached of 1,005 prompt tokens: 1,005 tokens used, not 1,905."""
    usage = ProviderUsage.from_openai(_chat("hi", cached=900)).unwrap()
    assert (usage.prompt_tokens, usage.cache_read_tokens, usage.prompt_total) == (105, 900, 1005)
    state = UsageState().record(usage, estimated_request=1000)
    assert state.cumulative_prompt_tokens == 1005
    assert state.hybrid(1000, prefix_unchanged=True) == (1005, "provider")


def test_from_openai_reads_the_responses_api_and_dicts() -> None:
    """A Responses result (object and dict) maps input_tokens and its cached part the same way."""
    data = {
        "id": "resp",
        "object": "response",
        "created_at": 0,
        "model": "gpt-4o",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 1005,
            "input_tokens_details": {"cached_tokens": 900, "cache_write_tokens": 5},
            "output_tokens": 3,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 1008,
        },
    }
    for response in (Response.model_validate(data), data):
        usage = ProviderUsage.from_openai(response).unwrap()
        assert (usage.prompt_total, usage.cache_read_tokens, usage.cache_write_tokens) == (
            1005,
            900,
            5,
        )
        assert usage.completion_tokens == 3


def test_from_anthropic_adds_cache_reads_and_writes() -> None:
    """Anthropic's input_tokens excludes cache reads and writes; the total includes both."""
    message = AnthropicMessage.model_validate(
        {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "hi"}],
            "stop_reason": "end_turn",
            "usage": {
                "input_tokens": 5,
                "output_tokens": 2,
                "cache_read_input_tokens": 900,
                "cache_creation_input_tokens": 100,
            },
        }
    )
    usage = ProviderUsage.from_anthropic(message).unwrap()
    assert (usage.prompt_tokens, usage.cache_read_tokens, usage.prompt_total) == (105, 900, 1005)


def test_usage_missing_is_a_failure_naming_what_was_found() -> None:
    """A response without usage is a Failure, not an exception or a zero."""
    failure = ProviderUsage.from_openai({"choices": []}).failure()
    assert str(failure) == (
        "expected the usage of an OpenAI response, "
        "found no prompt_tokens or input_tokens in a dict with keys ['choices']"
    )


def test_openai_loop_with_tools_validates_against_the_sdk() -> None:
    """The request after a tool round trip validates as chat.completions.create params."""
    ctx = _context(system="Be brief.", tools=TOOLS)
    ctx.add({"role": "user", "content": "What is in a.py?"})
    first = ctx.openai()
    reply = ctx.record(_chat("Let me look.", [("call_1", "a.py"), ("call_2", "b.py")]))
    assert [c.id for c in reply.tool_calls] == ["call_1", "call_2"]
    for call in reply.tool_calls:
        ctx.add(
            {"role": "tool", "tool_call_id": call.id, "content": f"contents of {call.arguments}"}
        )
    request = ctx.openai()
    assert materialized(OPENAI_REQUEST.validate_python(request)) == request
    assert request["messages"][: len(first["messages"])] == first["messages"], "prefix kept"
    roles = [m["role"] for m in request["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert request["messages"][2]["tool_calls"][0]["id"] == request["messages"][3]["tool_call_id"]


def test_anthropic_loop_places_breakpoints_and_validates() -> None:
    """Anthropic tool_use / tool_result messages are read; the request carries two breakpoints."""
    ctx = _context(model="claude-sonnet-4-5", system="Be brief.", tools=TOOLS)
    ctx.add({"role": "user", "content": "What is in a.py?"})
    ctx.anthropic()
    ctx.record(
        AnthropicMessage.model_validate(
            {
                "id": "m1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {"type": "text", "text": "Reading."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "read_file",
                        "input": {"path": "a.py"},
                    },
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 50, "output_tokens": 9},
            }
        )
    )
    ctx.add(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "print(1)"}],
        }
    )
    request = ctx.anthropic(max_tokens=1024)
    assert materialized(ANTHROPIC_REQUEST.validate_python(request)) == request
    assert request["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert request["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert request["tools"][0]["input_schema"]["properties"] == {"path": {"type": "string"}}


def test_the_clock_dates_every_node() -> None:
    """Nodes carry the injected clock's time, so the wall-clock rules see real ages."""
    times = iter([10.0, 20.0, 30.0, 40.0])
    ctx = _context(clock=lambda: next(times))
    ctx.add({"role": "user", "content": "hi"})
    ctx.openai()
    ctx.record(_chat("hello"))
    assert [c.created_at for c in ctx.session.branch()] == [10.0, 30.0]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"role": "robot", "content": "x"}, "cannot read message"),
        (
            {"role": "tool", "tool_call_id": "nope", "content": "x"},
            "no tool call 'nope' is waiting",
        ),
        (42, "expected a message with a role"),
    ],
)
def test_bad_messages_raise_input_error(message: object, expected: str) -> None:
    """What cannot be read raises InputError naming the problem; the session is unchanged."""
    ctx = _context()
    with pytest.raises(InputError, match=re.escape(expected)):
        ctx.add(message)
    assert ctx.session.head is None


def test_bad_configuration_raises_config_error() -> None:
    """An unknown model or spec raises ConfigError with the core's message."""
    with pytest.raises(ConfigError, match=re.escape("did you mean 'gpt-4o'")):
        _context(model="gpt4o")
    with pytest.raises(ConfigError, match=r"no such file"):
        _context(spec="no-such-spec.toml")


def test_async_twins_await_an_async_summarizer_on_the_callers_loop() -> None:
    """Aopenai compacts with an async summarizer, awaited on the running loop."""
    seen: list[asyncio.AbstractEventLoop] = []

    async def summarize(prompt: tuple[Message, ...]) -> str:
        seen.append(asyncio.get_running_loop())
        await asyncio.sleep(0)
        return (
            "## Goal\n"
            + " ".join(b.text for m in prompt for b in m.blocks if isinstance(b, TextBlock))[:100]
        )

    async def loop() -> tuple[asyncio.AbstractEventLoop, list[str]]:
        ctx = _context(window=32_000, summarizer=summarize)
        ctx.add({"role": "user", "content": "Summarise every module."})
        paths: list[str] = []
        for turn in range(30):
            await ctx.aopenai()
            assert ctx.last is not None
            paths.extend(ctx.last.decision_path)
            await ctx.arecord(_chat(f"Step {turn}: " + f"notes {turn}; " * 300))
            ctx.add({"role": "user", "content": f"Go on with step {turn + 1}."})
        return asyncio.get_running_loop(), paths

    running, paths = asyncio.run(loop())
    assert "compact:finished" in paths
    assert seen
    assert all(loop is running for loop in seen)


def test_turn_age_counts_turns_before_the_newest_reply() -> None:
    """The newest reply's tool result has turn_age 0; `gt = 1` clears those two or more turns back."""
    spec = """
[[rules]]
name = "clear-old"
when = { role = "tool", turn_age = { gt = 1 } }
then = { state = "cleared", text = "[cleared]" }
"""
    ctx = _context(spec=spec)
    ctx.add({"role": "user", "content": "Read four files."})
    for turn in range(4):
        ctx.openai()
        ctx.record(_chat(None, [(f"call_{turn}", f"f{turn}.py")]))
        ctx.add({"role": "tool", "tool_call_id": f"call_{turn}", "content": f"body of file {turn}"})
    tools = [m["content"] for m in ctx.openai()["messages"] if m["role"] == "tool"]
    assert tools == ["[cleared]", "[cleared]", "body of file 2", "body of file 3"]


@pytest.mark.parametrize(
    ("fake", "sdk"), [("FakeOpenAI", "openai"), ("FakeAnthropic", "anthropic")]
)
def test_a_fake_sdk_without_its_sdk_says_what_to_install(
    fake: str, sdk: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fakes check requests against the SDK's types: without it, one line says which to install."""
    from ctxrules.testing import fake_sdk  # noqa: PLC0415 - the module under test

    real = fake_sdk.importlib.util.find_spec
    monkeypatch.setattr(
        fake_sdk.importlib.util, "find_spec", lambda name: None if name == sdk else real(name)
    )
    with pytest.raises(ModuleNotFoundError, match=f"pip install {sdk}$"):
        getattr(fake_sdk, fake)(["hi"])
