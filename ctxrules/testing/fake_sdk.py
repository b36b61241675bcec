"""Stand-ins for ``openai.OpenAI()`` and ``anthropic.Anthropic()`` for tests and docs, offline.

Each checks every request against the SDK's own parameter types (so a request that the
real API would reject fails here too) and answers from a script with a response built
from the SDK's response types. A script entry is the reply text, a list of
``(tool_name, arguments)`` tool calls, or a function of the request that returns one of
those (a model that reads what it is sent, like `recall_first_handle`). Needs the
``openai`` / ``anthropic`` packages.

`FakeAnthropic` also keeps the Messages API's rules for extended thinking: asked with
``thinking`` enabled, each reply starts with a signed ``thinking`` block, and a request is
refused (as the API answers 400) when the assistant message of the tool loop it continues
does not start with a reasoning block, when a thinking block is not one it issued
(changed, or made up), or when a reasoning block carries a cache breakpoint. It refuses
what the API refuses of cache breakpoints too: more than four (a top-level ``cache_control``
counts as one more, at the end), or one with a 1-hour TTL after one of 5 minutes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Callable, Iterator, Sequence
from types import SimpleNamespace
from typing import Any

from ctxrules.rules.handles import handles_in

#: One reply: its text, or the tool calls it makes.
Reply = str | Sequence[tuple[str, dict[str, object]]]
#: One scripted reply, or a function of the request that makes it.
Scripted = Reply | Callable[[dict[str, Any]], Reply]


def recall_first_handle(request: dict[str, Any]) -> Reply:
    """A scripted turn: call ``recall`` with the first handle the request shows, as a model would.

    >>> recall_first_handle({"messages": [{"role": "tool", "content": "head… [recall h:abcdefgh]"}]})
    [('recall', {'handle': 'h:abcdefgh'})]
    """
    shown = handles_in(json.dumps(request.get("messages", []), ensure_ascii=False))
    return [("recall", {"handle": shown[0]})] if shown else "I see no handle to recall."


def _next(script: list[Scripted], request: dict[str, Any]) -> Reply:
    entry = script.pop(0)
    return entry(request) if callable(entry) else entry


def materialized(value: object) -> object:
    """``value`` with every iterator read into a list, so an SDK type's lazy checks all run."""
    # pydantic validates iterable fields lazily; reading them runs the validation.
    if isinstance(value, dict):
        return {key: materialized(item) for key, item in value.items()}
    if isinstance(value, list | Iterator):
        return [materialized(item) for item in value]
    return value


def _prompt_tokens(request: dict[str, Any]) -> int:
    # A rough count, enough for a usage block: a token is about four characters of JSON.
    return max(len(json.dumps(request.get("messages", []), default=str)) // 4, 1)


def _require(sdk: str, fake: str) -> None:
    """Say which SDK a fake checks requests against, when it is not installed."""
    if importlib.util.find_spec(sdk) is None:
        msg = f"{fake} checks every request against the {sdk} SDK's own types: pip install {sdk}"
        raise ModuleNotFoundError(msg, name=sdk)


class FakeOpenAI:
    """``client.chat.completions.create(**request)`` answering from ``script``, in order."""

    def __init__(self, script: Sequence[Scripted]) -> None:
        _require("openai", "FakeOpenAI")
        from openai.types.chat.completion_create_params import (  # noqa: PLC0415 - optional
            CompletionCreateParamsNonStreaming,
        )
        from pydantic import TypeAdapter  # noqa: PLC0415 - comes with the SDK

        self._adapter = TypeAdapter(CompletionCreateParamsNonStreaming)
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **request: Any) -> Any:  # noqa: ANN401 - an openai ChatCompletion
        """Validate the request, keep it, and return the next scripted ChatCompletion."""
        from openai.types.chat import ChatCompletion  # noqa: PLC0415 - optional

        validated = materialized(self._adapter.validate_python(request))
        if validated != request:
            raise ValueError(f"the SDK's types changed the request: {validated!r}")
        self.requests.append(request)
        turn, entry = len(self.requests), _next(self.script, request)
        message: dict[str, object] = {"role": "assistant", "content": None}
        if isinstance(entry, str):
            message["content"] = entry
        else:
            message["tool_calls"] = [
                {
                    "id": f"call_{turn}_{n}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
                for n, (name, arguments) in enumerate(entry)
            ]
        prompt = _prompt_tokens(request)
        return ChatCompletion.model_validate(
            {
                "id": f"chatcmpl-{turn}",
                "object": "chat.completion",
                "created": turn,
                "model": request["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "stop" if isinstance(entry, str) else "tool_calls",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": 10,
                    "total_tokens": prompt + 10,
                },
            }
        )


class FakeAnthropic:
    """``client.messages.create(**request)`` answering from ``script``, in order."""

    def __init__(
        self, script: Sequence[Scripted], *, thought: Callable[[int], str] | None = None
    ) -> None:
        """``thought(turn)`` is the thinking of each reply when thinking is enabled."""
        _require("anthropic", "FakeAnthropic")
        from anthropic.types.message_create_params import (  # noqa: PLC0415 - optional
            MessageCreateParamsNonStreaming,
        )
        from pydantic import TypeAdapter  # noqa: PLC0415 - comes with the SDK

        self._adapter = TypeAdapter(MessageCreateParamsNonStreaming)
        self.script = list(script)
        self.thought = thought or _thought
        self.requests: list[dict[str, Any]] = []
        self.messages = SimpleNamespace(create=self.create)

    def create(self, **request: Any) -> Any:  # noqa: ANN401 - an anthropic Message
        """Validate the request, keep it, and return the next scripted Message."""
        from anthropic.types import Message  # noqa: PLC0415 - optional

        validated = materialized(self._adapter.validate_python(request))
        if validated != request:
            raise ValueError(f"the SDK's types changed the request: {validated!r}")
        thinking = _thinking_enabled(request)
        _check_reasoning(request["messages"], thinking=thinking)
        _check_breakpoints(request)
        self.requests.append(request)
        turn, entry = len(self.requests), _next(self.script, request)
        content: list[dict[str, object]] = (
            [{"type": "text", "text": entry}]
            if isinstance(entry, str)
            else [
                {"type": "tool_use", "id": f"toolu_{turn}_{n}", "name": name, "input": arguments}
                for n, (name, arguments) in enumerate(entry)
            ]
        )
        if thinking:
            thought = self.thought(turn)
            content.insert(
                0, {"type": "thinking", "thinking": thought, "signature": _signature(thought)}
            )
        return Message.model_validate(
            {
                "id": f"msg_{turn}",
                "type": "message",
                "role": "assistant",
                "model": request["model"],
                "content": content,
                "stop_reason": "end_turn" if isinstance(entry, str) else "tool_use",
                "usage": {"input_tokens": _prompt_tokens(request), "output_tokens": 10},
            }
        )


#: The reasoning block types the Messages API returns and wants back unchanged.
_REASONING = ("thinking", "redacted_thinking")


def _thought(turn: int) -> str:
    return f"Turn {turn}: what the request asks, and the next step."


def _signature(thought: str) -> str:
    """The signature the fake gives a thinking block: only that exact text carries it."""
    return "sig-" + hashlib.sha256(thought.encode()).hexdigest()[:24]


def _thinking_enabled(request: dict[str, Any]) -> bool:
    thinking = request.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in {"enabled", "adaptive"}


def _check_reasoning(messages: list[dict[str, Any]], *, thinking: bool) -> None:
    """Refuse what the Messages API refuses of reasoning blocks (its 400 answers)."""
    for at, message in enumerate(messages):
        content = message.get("content")
        for n, block in enumerate(content if isinstance(content, list) else ()):
            if block.get("type") not in _REASONING:
                continue
            where = f"messages.{at}.content.{n}"
            if "cache_control" in block:
                raise ValueError(f"{where}: cache_control cannot be set on a {block['type']} block")
            if block["type"] == "thinking" and block.get("signature") != _signature(
                str(block.get("thinking"))
            ):
                raise ValueError(f"{where}: invalid signature in thinking block")
    if not thinking or len(messages) < 2:  # a tool loop continued is two messages at least
        return
    uses, results = (message.get("content") for message in messages[-2:])
    if not isinstance(uses, list) or not isinstance(results, list) or not uses:
        return
    continues_loop = (
        messages[-2].get("role") == "assistant"
        and any(block.get("type") == "tool_result" for block in results)
        and any(block.get("type") == "tool_use" for block in uses)
    )
    first = uses[0].get("type")
    if continues_loop and first not in _REASONING:
        raise ValueError(
            f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or"
            f" `redacted_thinking`, but found `{first}`. When `thinking` is enabled, a final"
            " `assistant` message must start with a thinking block"
        )


#: The most cache breakpoints a Messages request may carry.
_BREAKPOINTS = 4


def _check_breakpoints(request: dict[str, Any]) -> None:
    """Refuse what the Messages API refuses of cache breakpoints (its 400 answers)."""
    system = request.get("system")
    blocks = [
        *request.get("tools", ()),
        *(system if isinstance(system, list) else ()),
        *(
            block
            for message in request["messages"]
            if isinstance(message.get("content"), list)
            for block in message["content"]
        ),
    ]
    # In the order the API caches them: tools, system, messages, then the automatic one.
    controls = [block["cache_control"] for block in blocks if block.get("cache_control")]
    if request.get("cache_control"):
        controls.append(request["cache_control"])
    if len(controls) > _BREAKPOINTS:
        raise ValueError(
            f"A maximum of {_BREAKPOINTS} blocks with cache_control may be provided."
            f" Found {len(controls)}."
        )
    ttls = [control.get("ttl", "5m") for control in controls]
    if "5m" in ttls and "1h" in ttls[ttls.index("5m") :]:
        raise ValueError(
            "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block"
        )
