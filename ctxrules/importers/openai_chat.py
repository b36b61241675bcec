"""OpenAI chat message lists, bare or in a mini-swe-agent trajectory, into the DAG."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from returns.result import Failure, Result

from ctxrules.dag import Role
from ctxrules.importers.builder import Builder, Tally, session_name
from ctxrules.importers.messages import (
    Message,
    Skip,
    import_messages,
    openai_tool_calls,
    tool_result,
)
from ctxrules.importers.records import Unreadable, epoch, found, text_of
from ctxrules.importers.result import ImportFailure, ImportResult

_ROLES = {
    "system": Role.SYSTEM,
    "developer": Role.SYSTEM,
    "user": Role.USER,
    "assistant": Role.ASSISTANT,
}


def _field(value: object, *path: str) -> object:
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def import_openai_chat(
    document: object, *, source: str = "<text>", skip_bad: bool = False
) -> Result[ImportResult, ImportFailure]:
    """Import a parsed OpenAI chat log: a list of messages or ``{"messages": [...], ...}``.

    >>> log = [
    ...     {"role": "user", "content": "list files"},
    ...     {"role": "assistant", "content": None, "tool_calls": [
    ...         {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
    ... ]
    >>> graph = import_openai_chat(log).unwrap().session.graph
    >>> nodes = [graph.nodes[i] for i in graph.order]
    >>> [(c.id, c.role.value, c.input_value(), c.output) for c in nodes]
    [('m1', 'user', None, 'list files'), ('m2', 'assistant', None, ''), ('tool:c1', 'tool', {'cmd': 'ls'}, 'a.py')]
    """
    messages = _messages(document)
    if isinstance(messages, Unreadable):
        return Failure(ImportFailure(source, messages.reason))
    instance = _field(document, "instance_id")
    model = _field(document, "info", "config", "model", "model_name")
    out = Builder(
        Tally(source, "openai-chat", skip_bad),
        instance if isinstance(instance, str) and instance else session_name(source),
    )
    normalise = functools.partial(_normalise, model=model if isinstance(model, str) else "")
    return import_messages(messages, normalise, out)


def _messages(document: object) -> Sequence[object] | Unreadable:
    if isinstance(document, list):
        return document
    messages = _field(document, "messages")
    if isinstance(messages, list):
        return messages
    keys = f" with keys {sorted(document)[:8]}" if isinstance(document, dict) else ""
    return Unreadable(
        f"expected a list of messages or an object with a 'messages' list, "
        f"found {found(document)}{keys}"
    )


def _read(raw: object) -> tuple[str, dict[str, object], str] | Unreadable:
    if not isinstance(raw, dict):
        return Unreadable(f"expected a message object, found {found(raw)}")
    role = raw.get("role")
    if not isinstance(role, str):
        return Unreadable(f"role: expected a string, found {found(role)}")
    text = text_of(raw.get("content"))
    return text if isinstance(text, Unreadable) else (role, raw, text)


def _normalise(raw: object, *, model: str) -> Message | Skip | Unreadable:
    read = _read(raw)
    if isinstance(read, Unreadable):
        return read
    role, fields, text = read
    if role == "tool":
        return tool_result(fields, text)
    if role == "assistant":
        return _assistant(fields, text, model)
    # mini-swe-agent ends with an "exit" message holding the submission; the model never reads it.
    if role not in _ROLES:
        return Skip(role)
    return Message(text, _ROLES[role], metadata={"role": role} if role == "developer" else {})


def _assistant(raw: dict[str, object], text: str, model: str) -> Message | Unreadable:
    calls = openai_tool_calls(raw.get("tool_calls"))
    if isinstance(calls, Unreadable):
        return calls
    response = _field(raw, "extra", "response")
    extras = (
        ("reasoning_content", raw.get("reasoning_content")),
        ("refusal", raw.get("refusal")),
        ("function_call", raw.get("function_call")),
        ("usage", _field(response, "usage")),
    )
    metadata = {key: value for key, value in extras if value is not None}
    served_by = _field(response, "model")
    return Message(
        text,
        Role.ASSISTANT,
        name=served_by if isinstance(served_by, str) else model,
        metadata=metadata,
        tool_calls=calls,
        created_at=epoch(_field(raw, "extra", "timestamp")),
    )
