"""Requests in the shape the OpenAI and Anthropic SDKs take, and summarizers of either kind.

Pure assembly over the render adapters: the system prompt goes first, the tool schemas are
converted to the provider's shape, and Anthropic's cache breakpoints are placed.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence

from ctxrules.render import Message, TextBlock, to_anthropic, to_openai
from ctxrules.render.anthropic import AnthropicRequest

#: A summarizer as users write it: plain or ``async``, from the prompt messages to the text.
AnySummarizer = Callable[[tuple[Message, ...]], "str | Awaitable[str]"]


def _schema(tool: Mapping[str, object]) -> tuple[str, str, object]:
    # Either shape in, one reading out: name, description, JSON schema of the arguments.
    function = tool.get("function")
    if isinstance(function, Mapping):
        tool = function
    schema = tool.get("parameters", tool.get("input_schema", {"type": "object"}))
    return str(tool.get("name", "")), str(tool.get("description", "")), schema


def openai_tools(tools: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
    """Tool schemas (OpenAI or Anthropic shaped) as Chat Completions ``tools``.

    An OpenAI-shaped tool is sent as given (``strict`` and all); an Anthropic client tool is
    converted, its ``strict`` kept; an Anthropic server tool (web search) has no
    Chat Completions form and is left out.

    >>> openai_tools([{"name": "ls", "description": "List files", "input_schema": {"type": "object"}}])
    [{'type': 'function', 'function': {'name': 'ls', 'description': 'List files', 'parameters': {'type': 'object'}}}]
    >>> openai_tools([{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}])
    []
    """
    return [_openai_tool(tool) for tool in tools if not _server_tool(tool)]


def anthropic_tools(tools: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
    """Tool schemas (OpenAI or Anthropic shaped) as Messages ``tools``.

    An Anthropic-shaped tool (a server tool, ``cache_control``, ``strict`` and all) is sent as
    given; an OpenAI one is converted, its ``strict`` kept.

    >>> anthropic_tools(openai_tools([{"name": "ls", "input_schema": {"type": "object"}}]))
    [{'name': 'ls', 'description': '', 'input_schema': {'type': 'object'}}]
    >>> anthropic_tools([{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}])
    [{'type': 'web_search_20250305', 'name': 'web_search', 'max_uses': 3}]
    """
    return [
        dict(tool) if _server_tool(tool) or "input_schema" in tool else _converted(tool)
        for tool in tools
    ]


def _server_tool(tool: Mapping[str, object]) -> bool:
    """Whether ``tool`` is one the provider runs itself (Anthropic's ``web_search_…``, say)."""
    kind = tool.get("type")
    return isinstance(kind, str) and kind not in ("function", "custom")


def _openai_tool(tool: Mapping[str, object]) -> dict[str, object]:
    function = tool.get("function")
    if isinstance(function, Mapping):
        return {**tool, "function": dict(function)}
    name, description, schema = _schema(tool)
    converted: dict[str, object] = {"name": name, "description": description, "parameters": schema}
    if "strict" in tool:
        converted["strict"] = tool["strict"]
    return {"type": "function", "function": converted}


def _converted(tool: Mapping[str, object]) -> dict[str, object]:
    """An OpenAI-shaped tool as an Anthropic client tool."""
    name, description, schema = _schema(tool)
    converted: dict[str, object] = {
        "name": name,
        "description": description,
        "input_schema": schema,
    }
    function = tool.get("function")
    if isinstance(function, Mapping) and "strict" in function:
        converted["strict"] = function["strict"]
    return converted


def _with_system(system: str, messages: Sequence[Message]) -> list[Message]:
    head = [Message("system", (TextBlock(system),))] if system else []
    return [*head, *messages]


def openai_request(
    model: str, system: str, messages: Sequence[Message], tools: Sequence[Mapping[str, object]]
) -> dict[str, object]:
    """The keyword arguments of ``client.chat.completions.create``."""
    # The system prompt is its own message, never merged or paired with another: converting
    # the messages alone keeps the forms a commit's items keep (a plain list would not).
    converted = to_openai(messages)
    if system:
        # An insert moves references; a new list would take a reference to every message.
        converted.insert(0, {"role": "system", "content": system})
    request: dict[str, object] = {"model": model, "messages": converted}
    if tools:
        request["tools"] = openai_tools(tools)
    return request


def anthropic_request(
    model: str,
    system: str,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, object]],
    max_tokens: int,
) -> dict[str, object]:
    """The keyword arguments of ``client.messages.create``, with two cache breakpoints.

    One ends the system prompt, one the whole conversation: the next request extends this
    one, so it reads everything up to there from the cache.
    """
    if messages:
        # The messages alone keep the forms a commit's items keep; the system text goes first.
        converted = to_anthropic(
            messages, cache_system=bool(system), cache_prefix_end=len(messages) - 1
        )
        first: list[dict[str, object]] = (
            [{"type": "text", "text": system}] if system.strip() else []
        )
        if first and not converted.system:
            first[0]["cache_control"] = {"type": "ephemeral"}
        converted = AnthropicRequest([*first, *converted.system], converted.messages)
    else:
        neutral = _with_system(system, messages)
        converted = to_anthropic(
            neutral,
            cache_system=bool(system),
            cache_prefix_end=len(neutral) - 1 if neutral else None,
        )
    request: dict[str, object] = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": converted.messages,
    }
    if converted.system:
        request["system"] = converted.system
    if tools:
        request["tools"] = anthropic_tools(tools)
    return request


class LoopBridge:
    """Runs an ``async`` summarizer from the engine's worker thread on the caller's event loop."""

    def __init__(self, summarizer: AnySummarizer) -> None:
        self.summarizer = summarizer
        #: Set by the async methods of `Context` while they wait on the worker thread.
        self.loop: asyncio.AbstractEventLoop | None = None

    def __call__(self, prompt: tuple[Message, ...]) -> str:
        """The summary text; awaited on the caller's loop when there is one, else on a new one."""
        result = self.summarizer(prompt)
        if not inspect.isawaitable(result):
            return result
        loop = self.loop
        if loop is not None and loop.is_running():
            return asyncio.run_coroutine_threadsafe(_awaited(result), loop).result()
        return asyncio.run(_awaited(result))


async def _awaited(result: Awaitable[str]) -> str:
    return await result
