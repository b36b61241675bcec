"""LangChain / LangGraph message lists into the DAG.

Three serialised forms are read: plain dicts (``{"type": "human", "content": ...}``, as a
message's ``model_dump`` gives), ``messages_to_dict`` records (``{"type", "data"}``) and
``dumpd`` constructors (``{"lc": 1, "type": "constructor", ...}``); message objects
themselves are read through their ``model_dump``, so no LangChain import is needed here.
"""

from __future__ import annotations

from collections.abc import Sequence

from returns.result import Failure, Result

from ctxrules.dag import Role
from ctxrules.importers.builder import Builder, Tally, session_name
from ctxrules.importers.messages import (
    Message,
    Skip,
    ToolRequest,
    arguments_of,
    import_messages,
    openai_tool_calls,
    tool_result,
)
from ctxrules.importers.records import Unreadable, found, text_of
from ctxrules.importers.result import ImportFailure, ImportResult
from ctxrules.render.item import THINKING_KEY, THINKING_TYPES, reasoning_blocks

#: Message types (``type`` or the serialised class name) by the role they become.
KINDS = {
    "human": Role.USER,
    "HumanMessage": Role.USER,
    "HumanMessageChunk": Role.USER,
    "ai": Role.ASSISTANT,
    "AIMessage": Role.ASSISTANT,
    "AIMessageChunk": Role.ASSISTANT,
    "system": Role.SYSTEM,
    "SystemMessage": Role.SYSTEM,
    "SystemMessageChunk": Role.SYSTEM,
}

#: Message types that carry a tool result.
TOOL_KINDS = frozenset({"tool", "ToolMessage", "ToolMessageChunk"})

#: Content blocks of an AI message that are not text the model said: tool calls travel in
#: ``tool_calls``, reasoning is kept in the node's metadata.
_NOT_TEXT = frozenset({"tool_use", "tool_call", "function_call", "reasoning", *THINKING_TYPES})


def _field(value: object, *path: str) -> object:
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def import_langchain(
    document: object, *, source: str = "<text>", skip_bad: bool = False
) -> Result[ImportResult, ImportFailure]:
    """Import a parsed LangGraph thread state (``values.messages``) or a LangChain message list.

    >>> state = {"values": {"messages": [
    ...     {"type": "human", "content": [{"type": "text", "text": "weather?"}], "id": "h1"},
    ...     {"type": "ai", "content": "", "id": "a1",
    ...      "tool_calls": [{"name": "search", "args": {"q": "weather"}, "id": "c1"}]},
    ...     {"type": "tool", "content": "sunny", "tool_call_id": "c1", "status": "success"},
    ... ]}}
    >>> graph = import_langchain(state).unwrap().session.graph
    >>> nodes = [graph.nodes[i] for i in graph.order]
    >>> [(c.id, c.role.value, c.predecessor or c.caller, c.output) for c in nodes]
    [('h1', 'user', None, 'weather?'), ('a1', 'assistant', 'h1', ''), ('tool:c1', 'tool', 'a1', 'sunny')]
    """
    messages = _messages(document)
    if isinstance(messages, Unreadable):
        return Failure(ImportFailure(source, messages.reason))
    thread = _field(document, "metadata", "thread_id") or _field(document, "thread_id")
    out = Builder(
        Tally(source, "langchain", skip_bad),
        thread if isinstance(thread, str) and thread else session_name(source),
    )
    return import_messages(messages, normalise_langchain, out)


def _messages(document: object) -> Sequence[object] | Unreadable:
    if isinstance(document, list):
        return document
    for path in (("values", "messages"), ("messages",)):
        messages = _field(document, *path)
        if isinstance(messages, list):
            return messages
    keys = f" with keys {sorted(document)[:8]}" if isinstance(document, dict) else ""
    return Unreadable(
        "expected a LangGraph state with 'values.messages', an object with 'messages' "
        f"or a list of messages, found {found(document)}{keys}"
    )


def plain(raw: object) -> object:
    """A LangChain message object as its plain dict (``model_dump``); anything else as is."""
    dump = getattr(raw, "model_dump", None)
    if not isinstance(raw, dict) and callable(dump) and isinstance(getattr(raw, "type", None), str):
        dumped = dump()
        return dumped if isinstance(dumped, dict) else raw
    return raw


def _unwrap(raw: object) -> tuple[str, dict[str, object]] | Unreadable:
    raw = plain(raw)
    if not isinstance(raw, dict):
        return Unreadable(f"expected a message object, found {found(raw)}")
    # A serialised message: {"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}.
    if raw.get("lc") == 1 and raw.get("type") == "constructor":
        path, kwargs = raw.get("id"), raw.get("kwargs")
        if not isinstance(path, list) or not path or not isinstance(kwargs, dict):
            return Unreadable("expected a serialised message with an 'id' path and 'kwargs'")
        return str(path[-1]), kwargs
    kind = raw.get("type")
    if not isinstance(kind, str):
        return Unreadable(f"type: expected a string, found {found(kind)}")
    # messages_to_dict: {"type": "human", "data": {"content": ..., "id": ...}}.
    data = raw.get("data")
    if isinstance(data, dict) and raw.keys() <= {"type", "data"}:
        return kind, data
    return kind, raw


def _read(raw: object) -> tuple[str, dict[str, object], str] | Unreadable:
    unwrapped = _unwrap(raw)
    if isinstance(unwrapped, Unreadable):
        return unwrapped
    kind, fields = unwrapped
    content = fields.get("content")
    if kind in KINDS and KINDS[kind] is Role.ASSISTANT and isinstance(content, list):
        content = [
            part
            for part in content
            if not (isinstance(part, dict) and part.get("type") in _NOT_TEXT)
        ]
    text = text_of(content)
    return text if isinstance(text, Unreadable) else (kind, fields, text)


def normalise_langchain(raw: object) -> Message | Skip | Unreadable:
    """One LangChain message in the common shape (see `Message`)."""
    read = _read(raw)
    if isinstance(read, Unreadable):
        return read
    kind, fields, text = read
    if kind in TOOL_KINDS:
        return tool_result(fields, text, is_error=fields.get("status") == "error")
    role = KINDS.get(kind)
    message_id = fields.get("id")
    message_id = message_id if isinstance(message_id, str) and message_id else None
    if role is Role.ASSISTANT:
        return _assistant(fields, text, message_id)
    return Skip(kind) if role is None else Message(text, role, id=message_id)


def _tool_calls(fields: dict[str, object]) -> tuple[ToolRequest, ...] | Unreadable:
    calls = fields.get("tool_calls")
    if not calls:
        # Older serialisations keep only the provider's (OpenAI-shaped) tool calls.
        return openai_tool_calls(_field(fields, "additional_kwargs", "tool_calls"))
    if not isinstance(calls, list):
        return Unreadable(f"tool_calls: expected a list, found {found(calls)}")
    requests: list[ToolRequest] = []
    for index, call in enumerate(calls):
        name = call.get("name") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(name, str):
            return Unreadable(
                f"tool_calls[{index}]: expected an object with a name, found {found(call)}"
            )
        call_id = call.get("id")
        arguments, notes = arguments_of(call.get("args"))
        requests.append(
            ToolRequest(call_id if isinstance(call_id, str) else None, name, arguments, notes)
        )
    return tuple(requests)


def _assistant(
    fields: dict[str, object], text: str, message_id: str | None
) -> Message | Unreadable:
    calls = _tool_calls(fields)
    if isinstance(calls, Unreadable):
        return calls
    extras = (
        ("reasoning_content", _field(fields, "additional_kwargs", "reasoning_content")),
        ("reasoning", _reasoning(fields.get("content"))),
        ("usage", fields.get("usage_metadata")),
        ("invalid_tool_calls", fields.get("invalid_tool_calls") or None),
        ("finish_reason", _field(fields, "response_metadata", "finish_reason")),
    )
    metadata = {key: value for key, value in extras if value is not None}
    if blocks := reasoning_blocks(fields.get("content")):
        # Anthropic's signed blocks, verbatim: sent back first in this reply's message.
        metadata[THINKING_KEY] = blocks
    model = _field(fields, "response_metadata", "model_name")
    return Message(
        text,
        Role.ASSISTANT,
        id=message_id,
        name=model if isinstance(model, str) else "",
        metadata=metadata,
        tool_calls=calls,
    )


def _reasoning(content: object) -> str | None:
    """The reasoning blocks of an AI message's content, joined; None when there are none."""
    if not isinstance(content, list):
        return None
    texts = [
        str(part.get("reasoning") or part.get("thinking") or "")
        for part in content
        if isinstance(part, dict) and part.get("type") in {"reasoning", "thinking"}
    ]
    return "\n".join(texts) or None
