"""Linear message lists (OpenAI chat, LangChain) into the DAG, once each message is normalised.

A format's importer turns each raw message into a `Message`, a `Skip` or the reason it is
bad; this module links the messages into one conversation chain, hangs tool calls off
their assistant and fills them from the tool messages that answer them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs
from returns.result import Result

from ctxrules.dag import Role
from ctxrules.importers.builder import Builder, Draft
from ctxrules.importers.records import Unreadable, found, guarded, parse_json
from ctxrules.importers.result import ImportFailure, ImportResult


@attrs.frozen
class ToolRequest:
    """A tool call an assistant message made; ``call_id`` None when the log gave none."""

    call_id: str | None
    name: str
    arguments: object
    metadata: Mapping[str, object] = attrs.Factory(dict)


@attrs.frozen
class Message:
    """One message in a common shape: a node (``role`` set) or a tool result (``result_for``)."""

    text: str
    role: Role | None = None
    id: str | None = None
    name: str = ""
    metadata: Mapping[str, object] = attrs.Factory(dict)
    tool_calls: tuple[ToolRequest, ...] = ()
    result_for: str | None = None
    is_error: bool = False
    created_at: float = 0.0


@attrs.frozen
class Skip:
    """A message deliberately left out, counted under ``kind``."""

    kind: str


#: A format's reading of one raw message: a `Message`, a `Skip`, or why it is bad.
Normaliser = Callable[[object], Message | Skip | Unreadable]


def tool_result(
    fields: Mapping[str, object], text: str, *, is_error: bool = False
) -> Message | Unreadable:
    """A tool message: the result ``text`` for the call named by ``fields["tool_call_id"]``."""
    call_id = fields.get("tool_call_id")
    if not isinstance(call_id, str):
        return Unreadable(f"tool_call_id: expected a string, found {found(call_id)}")
    return Message(text, result_for=call_id, is_error=is_error)


def arguments_of(raw: object) -> tuple[object, dict[str, object]]:
    """Tool arguments as JSON, parsed from a string when they are one; metadata notes a failure.

    >>> arguments_of('{"cmd": "ls"}'), arguments_of("ls -la")
    (({'cmd': 'ls'}, {}), ('ls -la', {'arguments_not_json': True}))
    """
    if not isinstance(raw, str):
        return ({} if raw is None else raw), {}
    parsed = parse_json(raw) if raw.strip() else {}
    if isinstance(parsed, Unreadable):
        return raw, {"arguments_not_json": True}
    return parsed, {}


def openai_tool_calls(
    raw: object, field: str = "tool_calls"
) -> tuple[ToolRequest, ...] | Unreadable:
    """OpenAI-shaped tool calls (``{"id", "function": {"name", "arguments"}}``) as requests."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        return Unreadable(f"{field}: expected a list, found {found(raw)}")
    requests: list[ToolRequest] = []
    for index, call in enumerate(raw):
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if (
            not isinstance(call, dict)
            or not isinstance(function, dict)
            or not isinstance(name, str)
        ):
            return Unreadable(
                f"{field}[{index}]: expected an object with function.name, found {found(call)}"
            )
        call_id = call.get("id")
        arguments, notes = arguments_of(function.get("arguments"))
        requests.append(
            ToolRequest(call_id if isinstance(call_id, str) else None, name, arguments, notes)
        )
    return tuple(requests)


def import_messages(
    messages: Sequence[object], normalise: Normaliser, out: Builder
) -> Result[ImportResult, ImportFailure]:
    """Link normalised messages into one chain; bad messages are reported by 1-based position."""
    previous: str | None = None
    number = 0

    def read(raw: object) -> str | None:
        nonlocal previous
        message = normalise(raw)
        problem: str | None = message.reason if isinstance(message, Unreadable) else None
        if isinstance(message, Skip):
            out.tally.skipped[message.kind] += 1
        elif isinstance(message, Message):
            problem = _add(out, message, number, previous)
            if problem is None and message.role is not None:
                previous = out.head
        return problem

    for number, raw in enumerate(messages, start=1):
        out.tally.records += 1
        problem = guarded(read, raw)
        if problem is not None and (stop := out.reject(number, problem, "message")) is not None:
            return stop
    return out.finish()


def _add(out: Builder, message: Message, number: int, previous: str | None) -> str | None:
    if message.role is None:
        problem = out.result_problem(message.result_for, "tool message")
        if problem is None and message.result_for is not None:
            out.answer(message.result_for, message.text, is_error=message.is_error)
        return problem
    node_id = message.id if message.id and message.id not in out.drafts else f"m{number}"
    if node_id in out.drafts:
        return f"duplicate node id {node_id!r}"
    call_ids = [
        call.call_id if call.call_id is not None else f"{node_id}.{index}"
        for index, call in enumerate(message.tool_calls)
    ]
    seen: set[str] = set()
    for index, call_id in enumerate(call_ids):
        problem = out.tool_id_problem(call_id)
        if problem is None and call_id in seen:
            problem = f"duplicate tool call id {call_id!r}"
        if problem is not None:
            return f"tool_calls[{index}]: {problem}"
        seen.add(call_id)
    metadata = dict(message.metadata)
    if message.id is not None and node_id != message.id:
        metadata["message_id"] = message.id
    node = out.add(
        Draft(
            node_id,
            message.role,
            name=message.name,
            output=message.text,
            predecessor=previous,
            metadata=metadata,
            created_at=message.created_at,
        )
    )
    for call, call_id in zip(message.tool_calls, call_ids, strict=True):
        out.add_tool(node, call_id, call.name, call.arguments, dict(call.metadata))
    out.head = node.id
    return None
