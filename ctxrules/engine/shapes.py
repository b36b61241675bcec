"""Messages and responses as the SDKs shape them (OpenAI, Anthropic, plain dicts), read into entries.

An entry is what the session records: a message said by a role, an assistant reply with
its tool calls, or a tool result. SDK objects (pydantic models) are read through their
``model_dump``; nothing here imports an SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from ctxrules.importers.claude_blocks import assistant_blocks, user_blocks
from ctxrules.importers.messages import arguments_of, openai_tool_calls
from ctxrules.importers.records import Unreadable, found, text_of
from ctxrules.render.item import THINKING_TYPES, reasoning_blocks


@attrs.frozen
class ToolCall:
    """A tool call the model asked for: its id, the tool's name and its arguments."""

    id: str
    name: str
    arguments: object


@attrs.frozen
class Said:
    """A message of ``role`` (user, system or assistant) with its text and any tool calls.

    ``thinking`` holds an assistant reply's reasoning blocks (`reasoning_blocks`), to send back;
    ``dropped`` the types of its blocks that are not kept (a server tool's use and result).
    """

    role: str
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    thinking: tuple[dict[str, object], ...] = ()
    dropped: tuple[str, ...] = ()


@attrs.frozen
class ToolOutput:
    """The result of the tool call ``call_id``."""

    call_id: str
    text: str
    is_error: bool = False


#: What one message becomes: entries in order.
Entry = Said | ToolOutput


def plain(value: object) -> object:
    """An SDK object as the dict its ``model_dump`` gives; a dict or list as it is.

    An object whose ``model_dump`` raises is returned as an `Unreadable` saying so.
    """
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, Mapping):
        try:
            return dump(exclude_none=True)
        except Exception as error:  # noqa: BLE001 - the host's object, read at the boundary
            return Unreadable(f"its model_dump raised {type(error).__name__}: {str(error)[:200]}")
    return value


def read_message(raw: object) -> tuple[Entry, ...] | Unreadable:
    """One OpenAI, Anthropic or plain ``{"role", "content"}`` message as entries.

    >>> read_message({"role": "tool", "tool_call_id": "c1", "content": "ok"})
    (ToolOutput(call_id='c1', text='ok', is_error=False),)
    >>> read_message({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]})
    (ToolOutput(call_id='t1', text='ok', is_error=False),)
    """
    message = plain(raw)
    if isinstance(message, Unreadable):
        return message
    if not isinstance(message, Mapping):
        return Unreadable(f"expected a message with a role, found {found(message)}")
    if message.get("type") == "function_call_output":  # an OpenAI Responses input item
        return _tool_output(message.get("call_id"), message.get("output"))
    role = message.get("role")
    reader = _READERS.get(role) if isinstance(role, str) else None
    if reader is None:
        return Unreadable(f"expected role user, assistant, system or tool, found {found(role)}")
    return reader(message)


def _system(message: Mapping[str, object]) -> tuple[Entry, ...] | Unreadable:
    text = text_of(message.get("content"))
    return text if isinstance(text, Unreadable) else (Said("system", text),)


def _tool_output(call_id: object, content: object) -> tuple[Entry, ...] | Unreadable:
    text = text_of(content)
    if not isinstance(call_id, str) or isinstance(text, Unreadable):
        return Unreadable("a tool result needs the id of its call and text content")
    return (ToolOutput(call_id, text),)


def _user(message: Mapping[str, object]) -> tuple[Entry, ...] | Unreadable:
    content = message.get("content")
    read = user_blocks(content if content is not None else "")
    if isinstance(read, Unreadable):
        return read
    texts, results = read
    outputs: list[Entry] = [ToolOutput(r.tool_use_id, r.text, r.is_error) for r in results]
    return (*outputs, *([Said("user", "\n".join(texts))] if texts else []))


def _assistant(message: Mapping[str, object]) -> tuple[Entry, ...] | Unreadable:
    content = message.get("content")
    if "tool_calls" in message or content is None or isinstance(content, str):
        spoken = None if content else _spoken(message)
        text = text_of(spoken if spoken is not None else content)
        calls = openai_tool_calls(message.get("tool_calls"))
        if isinstance(text, Unreadable) or isinstance(calls, Unreadable):
            return text if isinstance(text, Unreadable) else calls  # type: ignore[return-value]
        found_calls = tuple(
            ToolCall(c.call_id or f"call_{i}", c.name, c.arguments) for i, c in enumerate(calls)
        )
        return (Said("assistant", text, found_calls),)
    blocks = assistant_blocks(content)
    if isinstance(blocks, Unreadable):
        return blocks
    uses = tuple(ToolCall(u.id, u.name, u.input) for u in blocks.tool_uses)
    text = "\n".join(blocks.texts)
    # Reasoning blocks are kept whole (`reasoning_blocks`), not dropped.
    dropped = tuple(kind for kind in blocks.other if kind not in THINKING_TYPES)
    return (Said("assistant", text, uses, tuple(reasoning_blocks(content)), dropped),)


def _spoken(message: Mapping[str, object]) -> str | None:
    """What a Chat Completions reply with no content said: its refusal, or its audio's transcript."""
    # Read as the reply's text, so the next request holds the answer the model gave.
    refusal, audio = message.get("refusal"), message.get("audio")
    if isinstance(refusal, str) and refusal:
        return refusal
    transcript = audio.get("transcript") if isinstance(audio, Mapping) else None
    return transcript if isinstance(transcript, str) else None


#: Blocks read for what they are, not replaced by a ``[type]`` placeholder.
_READ_BLOCKS = frozenset({"text", "tool_use", "tool_result", "refusal", *THINKING_TYPES})


def placeholder_kinds(raw: object) -> tuple[str, ...]:
    """The types of a message's blocks kept only as a ``[type]`` placeholder (an image, a file).

    >>> placeholder_kinds({"role": "user", "content": [{"type": "text", "text": "see"},
    ...     {"type": "image", "source": {}}, {"type": "image_url", "image_url": {}}]})
    ('image', 'image_url')
    >>> placeholder_kinds({"role": "user", "content": [{"type": "tool_result",
    ...     "tool_use_id": "t1", "content": [{"type": "image", "source": {}}]}]})
    ('image',)
    >>> placeholder_kinds({"role": "user", "content": "plain text"})
    ()
    """
    message = plain(raw)
    return _kinds(message.get("content") if isinstance(message, Mapping) else None)


def _kinds(content: object) -> tuple[str, ...]:
    """`placeholder_kinds` of a content list, a tool result's own content list included."""
    if not isinstance(content, list):
        return ()
    found: list[str] = []
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "tool_result":
            # An image a tool returned is as lost as one the user sent.
            found.extend(_kinds(part.get("content")))
        elif (
            isinstance(kind, str)
            and kind not in _READ_BLOCKS
            and not isinstance(part.get("text"), str)
        ):
            found.append(kind)
    return tuple(found)


#: How each role's message is read.
_READERS: dict[str, Callable[[Mapping[str, object]], tuple[Entry, ...] | Unreadable]] = {
    "tool": lambda m: _tool_output(m.get("tool_call_id"), m.get("content")),
    "system": _system,
    "developer": _system,
    "assistant": _assistant,
    "user": _user,
}


def read_response(raw: object) -> tuple[Said, str] | Unreadable:
    """The assistant reply of a response and its provider: ``openai`` or ``anthropic``.

    Reads OpenAI Chat Completions (``choices``), OpenAI Responses (``output``) and
    Anthropic Messages (``content``), as SDK objects or dicts.
    """
    response = plain(raw)
    if isinstance(response, Unreadable):
        return response
    if not isinstance(response, Mapping):
        return Unreadable(f"expected a provider response, found {found(response)}")
    choices = response.get("choices")
    if isinstance(choices, list) and choices:
        first = choices[0]
        message = first.get("message") if isinstance(first, Mapping) else None
        return _reply(read_message(message), "openai")
    if isinstance(response.get("output"), list):
        return _responses_output(response["output"])
    if response.get("type") == "message" or isinstance(response.get("content"), list):
        content = response.get("content", [])
        return _reply(read_message({"role": "assistant", "content": content}), "anthropic")
    keys = sorted(map(str, response))[:8]
    return Unreadable(f"expected choices, output or content in the response, found keys {keys}")


def stop_reason(raw: object) -> str | None:
    """Why the model stopped, as the response says it; None if it does not.

    Anthropic's ``stop_reason``, Chat Completions' ``finish_reason``, or a Responses
    result's ``status`` (its incomplete reason, when it has one).

    >>> stop_reason({"type": "message", "content": [], "stop_reason": "max_tokens"})
    'max_tokens'
    >>> stop_reason({"choices": [{"message": {}, "finish_reason": "length"}]})
    'length'
    >>> stop_reason({"output": [], "status": "incomplete",
    ...     "incomplete_details": {"reason": "max_output_tokens"}})
    'max_output_tokens'
    """
    response = plain(raw)
    if not isinstance(response, Mapping):
        return None
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        found = choices[0].get("finish_reason")
    elif "output" in response:
        details = response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, Mapping) else None
        found = reason or response.get("status")
    else:
        found = response.get("stop_reason")
    return found if isinstance(found, str) else None


def _reply(read: tuple[Entry, ...] | Unreadable, provider: str) -> tuple[Said, str] | Unreadable:
    if isinstance(read, Unreadable):
        return read
    said = read[0] if read else None
    if not isinstance(said, Said) or said.role != "assistant":
        return Unreadable("the response holds no assistant message")
    return _unique_calls(said, provider)


def _unique_calls(said: Said, provider: str) -> tuple[Said, str] | Unreadable:
    # Two calls with one id could not be told apart when their results come back.
    seen: set[str] = set()
    for call in said.tool_calls:
        if call.id in seen:
            return Unreadable(f"the tool call id {call.id!r:.80} appears twice in the reply")
        seen.add(call.id)
    return said, provider


def _responses_output(items: list[object]) -> tuple[Said, str] | Unreadable:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for position, item in enumerate(map(plain, items)):
        if isinstance(item, Unreadable):
            return item
        if not isinstance(item, Mapping):
            return Unreadable(f"output: expected items, found {found(item)}")
        if item.get("type") == "message":
            read = text_of(item.get("content"))
            if isinstance(read, Unreadable):
                return read
            texts.append(read)
        elif item.get("type") == "function_call":
            arguments, _ = arguments_of(item.get("arguments"))
            call_id, name = item.get("call_id") or item.get("id"), item.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                expected = "a function_call with a call_id and a name (strings)"
                return Unreadable(f"output[{position}]: expected {expected}")
            calls.append(ToolCall(call_id, name, arguments))
    return _unique_calls(Said("assistant", "\n".join(texts), tuple(calls)), "openai")
