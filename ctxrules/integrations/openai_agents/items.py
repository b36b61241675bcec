"""Responses API input items (what the Agents SDK keeps in a session) in and out of ctxrules.

Kept: messages of every role, function calls and their outputs. Reasoning items and
hosted-tool items (web search, file search, computer use) are not stored and not sent back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import cast

from returns.result import Failure

from ctxrules.canonical import content_hash
from ctxrules.dag import Role, Session, Status, freeze, thaw
from ctxrules.dag.call_ids import PROVIDER_CALL_ID
from ctxrules.engine.shapes import plain
from ctxrules.importers.messages import Message as Common
from ctxrules.importers.messages import ToolRequest, arguments_of
from ctxrules.importers.records import Unreadable, text_of
from ctxrules.integrations.live import Entry, result_key
from ctxrules.render import Message, to_openai

#: Node metadata key holding the raw item a node (or a tool node's call) came from.
ITEM = "agents_item"

_ROLES = {"user": Role.USER, "system": Role.SYSTEM, "developer": Role.SYSTEM}

Item = dict[str, object]


def entry_of(item: Mapping[str, object]) -> Entry | None:
    """One item as a keyed `Entry`; None for the item kinds this integration does not keep.

    >>> entry_of({"role": "user", "content": "hi"}).message.text
    'hi'
    >>> entry_of({"type": "function_call_output", "call_id": "c1", "output": "ok"}).key
    'result:c1'
    >>> entry_of({"type": "reasoning", "id": "rs_1", "summary": []}) is None
    True
    """
    raw = dict(item)
    kind, role = raw.get("type", "message"), raw.get("role")
    if kind == "function_call_output":
        call_id = str(raw.get("call_id", ""))
        output = raw.get("output")
        text = output if isinstance(output, str) else json.dumps(output)
        return Entry(result_key(call_id), Common(text, result_for=call_id))
    key = content_hash(raw)[:24]
    if kind == "function_call":
        arguments, notes = arguments_of(raw.get("arguments"))
        request = ToolRequest(
            str(raw.get("call_id", "")), str(raw.get("name", "")), arguments, {**notes, ITEM: raw}
        )
        return Entry(key, Common("", Role.ASSISTANT, tool_calls=(request,)), joins=True)
    if kind != "message" or not isinstance(role, str):
        return None
    read = text_of(raw.get("content"))
    text = read if isinstance(read, str) else ""
    node_role = Role.ASSISTANT if role == "assistant" else _ROLES.get(role)
    if node_role is None:
        return None
    return Entry(key, Common(text, node_role, metadata={ITEM: raw}))


def plain_items(items: object) -> list[Item] | str:
    """The items as plain JSON dicts (lone surrogates replaced), or what is wrong and where.

    >>> plain_items([{"role": "user", "content": "hi"}]) == [{"role": "user", "content": "hi"}]
    True
    >>> plain_items([{"type": "function_call_output", "call_id": "c1", "output": {1, 2}}])
    'items[0].output: expected a JSON-like value (dict with str keys, list, str, int, float, bool or None), found a value of type set'
    """
    if not isinstance(items, Sequence) or isinstance(items, str | bytes):
        return f"items: expected a list of Responses input items, found {type(items).__name__}"
    kept: list[Item] = []
    for position, item in enumerate(items):
        where = f"items[{position}]"
        try:
            raw = plain(item)
        except Exception as error:  # noqa: BLE001 - an SDK object's own model_dump failed
            return f"{where}: its model_dump raised {type(error).__name__}: {str(error)[:200]}"
        if isinstance(raw, Unreadable):
            return f"{where}: {raw.reason}"
        if not isinstance(raw, Mapping):
            return f"{where}: expected a dict (a Responses input item), found {type(raw).__name__}"
        frozen = freeze(dict(raw), where)
        if isinstance(frozen, Failure):
            return str(frozen.failure())
        kept.append(cast("Item", thaw(frozen.unwrap())))
    return kept


def entries_of(items: Sequence[Mapping[str, object]]) -> list[Entry]:
    """The entries of the items this integration keeps, in order."""
    return [entry for item in items if (entry := entry_of(item)) is not None]


def stored_items(session: Session) -> list[Item]:
    """The raw items of the session's branch, as they were added (tool outputs rebuilt)."""
    graph, out = session.graph, []
    for call in session.branch():
        own = call.metadata_value().get(ITEM)
        if isinstance(own, dict):
            out.append(own)
        tools = [graph.nodes[callee] for callee in graph.callees_of(call.id)]
        out.extend(item for t in tools if isinstance(item := t.metadata_value().get(ITEM), dict))
        out.extend(
            {
                "type": "function_call_output",
                # The id the item was added with: its call's, not a fresh one recorded.
                "call_id": t.metadata.get(PROVIDER_CALL_ID, t.metadata.get("tool_call_id")),
                "output": t.output_value(),
            }
            for t in tools
            if t.status is not Status.RUNNING
        )
    return out


def to_items(messages: Sequence[Message]) -> list[Item]:
    """Rendered ctxrules messages (``TurnPrep.messages``) as Responses input items.

    >>> from ctxrules.render import TextBlock, ToolResultBlock, ToolUseBlock
    >>> to_items([
    ...     Message("user", (TextBlock("List the files."),)),
    ...     Message("assistant", (ToolUseBlock("c1", "ls", "{}"),)),
    ...     Message("tool", (ToolResultBlock("c1", "a.py"),)),
    ... ])  # doctest: +NORMALIZE_WHITESPACE
    [{'role': 'user', 'content': 'List the files.'},
     {'type': 'function_call', 'call_id': 'c1', 'name': 'ls', 'arguments': '{}'},
     {'type': 'function_call_output', 'call_id': 'c1', 'output': 'a.py'}]
    """
    out: list[Item] = []
    for params in to_openai(messages):
        role, content = params["role"], params.get("content")
        if role == "tool":
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": params["tool_call_id"],
                    "output": content,
                }
            )
            continue
        if isinstance(content, str) and content:
            out.append({"role": role, "content": content})
        calls = params.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            function = call["function"]
            out.append(
                {
                    "type": "function_call",
                    "call_id": call["id"],
                    "name": function["name"],
                    "arguments": function["arguments"],
                }
            )
    return out
