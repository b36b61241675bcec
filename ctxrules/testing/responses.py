"""Model responses as plain dicts, shaped as the OpenAI and Anthropic SDKs return them.

For scripted agent loops in tests and benchmarks: `Context.record` reads a dict as it
reads the SDK's object. No SDK package is needed (`ctxrules.testing.fake_sdk` checks
requests against the SDKs' own types instead).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

#: A tool call of a scripted reply: its id, the tool's name, the arguments.
Call = tuple[str, str, Mapping[str, object]]


def openai_response(
    n: int,
    text: str,
    calls: Sequence[Call] = (),
    usage: tuple[int, int] = (1_000, 0),
    *,
    model: str = "gpt-4o",
    completion_tokens: int = 40,
) -> dict[str, Any]:
    """A chat completion numbered ``n``: ``text``, ``calls``, ``usage`` as (prompt, cached).

    >>> reply = openai_response(1, "Reading.", [("c1", "read_file", {"path": "a.py"})])
    >>> reply["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"path": "a.py"}'
    """
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {
                "id": cid,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for cid, name, args in calls
        ]
    prompt, cached = usage
    return {
        "id": f"r{n}",
        "object": "chat.completion",
        "created": n,
        "model": model,
        "choices": [
            {"index": 0, "finish_reason": "tool_calls" if calls else "stop", "message": message}
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def anthropic_response(
    n: int,
    text: str,
    calls: Sequence[Call] = (),
    usage: tuple[int, int] = (1_000, 0),
    *,
    model: str = "claude-sonnet-4-5",
    output_tokens: int = 40,
) -> dict[str, Any]:
    """A message numbered ``n``: ``text``, ``calls``, ``usage`` as (prompt, cached).

    >>> reply = anthropic_response(1, "Reading.", [("t1", "read_file", {"path": "a.py"})])
    >>> [block["type"] for block in reply["content"]], reply["stop_reason"]
    (['text', 'tool_use'], 'tool_use')
    """
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += [
        {"type": "tool_use", "id": cid, "name": name, "input": dict(args)}
        for cid, name, args in calls
    ]
    prompt, cached = usage
    return {
        "id": f"m{n}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "stop_reason": "tool_use" if calls else "end_turn",
        "content": content,
        # Anthropic's input_tokens leave out what was read from the cache.
        "usage": {
            "input_tokens": prompt - cached,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": cached,
        },
    }
