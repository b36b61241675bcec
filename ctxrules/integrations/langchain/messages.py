"""LangChain messages in and out: into a ctxrules session, and rendered context back out."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)
from returns.result import Failure, Result

from ctxrules.canonical import content_hash
from ctxrules.commit.vector import Chunk
from ctxrules.dag import Session
from ctxrules.importers.langchain import import_langchain, normalise_langchain, plain
from ctxrules.importers.messages import Message as Common
from ctxrules.importers.records import Unreadable
from ctxrules.importers.result import ImportFailure
from ctxrules.integrations.live import Entry, result_key
from ctxrules.render import Message, TextBlock, ThinkingBlock, ToolUseBlock, to_openai
from ctxrules.render.render import RenderedMessages


def from_langchain(
    messages: Sequence[object], *, session_id: str = "langchain"
) -> Result[Session, ImportFailure]:
    """A session from LangChain messages: objects, or ``messages_to_dict``, ``dumpd`` or OpenAI dicts.

    >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    >>> session = from_langchain([
    ...     HumanMessage("weather?", id="h1"),
    ...     AIMessage("", id="a1", tool_calls=[{"name": "search", "args": {"q": "weather"}, "id": "c1"}]),
    ...     ToolMessage("sunny", tool_call_id="c1"),
    ... ]).unwrap()
    >>> [(c.role.value, c.name, c.output) for c in (session.graph.nodes[i] for i in session.graph.order)]
    [('user', '', 'weather?'), ('assistant', '', ''), ('tool', 'search', 'sunny')]
    """
    read: list[object] = []
    for index, message in enumerate(messages):
        if isinstance(message, dict) and "role" in message and "type" not in message:
            try:  # an OpenAI-style dict: LangChain's own reader knows every variant
                message = convert_to_messages([message])[0]  # noqa: PLW2901 - read in place
            except (ValueError, TypeError, KeyError, NotImplementedError) as err:
                return Failure(ImportFailure(session_id, f"messages[{index}]: {err}"))
        read.append(message)
    return import_langchain(read, source=session_id).map(lambda imported: imported.session)


def key_of(message: object) -> str | None:
    """The key a message object is synced under, cheaply: its tool call id or its own id.

    None when only its content can key it (see `entries_of`).
    """
    # The type first: asking a message object for a field it lacks costs it an exception.
    if getattr(message, "type", None) == "tool":
        call_id = getattr(message, "tool_call_id", None)
        if isinstance(call_id, str):
            return result_key(call_id)
    message_id = getattr(message, "id", None)
    return message_id if isinstance(message_id, str) and message_id else None


def entries_of(messages: Sequence[object], offset: int = 0) -> list[Entry] | Unreadable:
    """Each message as a keyed `Entry` (``offset``: the position of the first); or why not.

    A message is keyed by its id, or by its position and content when it has none.
    """
    entries: list[Entry] = []
    for index, raw in enumerate(messages, start=offset):
        common = normalise_langchain(raw)
        if isinstance(common, Unreadable):
            return Unreadable(f"messages[{index}]: {common.reason}")
        if not isinstance(common, Common):
            continue
        if common.result_for is not None:
            entries.append(Entry(result_key(common.result_for), common))
            continue
        fields = plain(raw)
        message_id = fields.get("id") if isinstance(fields, dict) else None
        key = message_id if isinstance(message_id, str) and message_id else None
        entries.append(Entry(key or f"{index}:{content_hash(_keyable(fields))[:16]}", common))
    return entries


def _keyable(fields: object) -> object:
    # A message dump holds only JSON-like values; anything else is keyed by its text.
    return json.loads(json.dumps(fields, default=str))


def to_langchain(messages: Sequence[Message]) -> list[BaseMessage]:
    """Rendered ctxrules messages (``TurnPrep.messages``) as LangChain messages.

    Tool calls keep their ids and names; arguments that are no longer a JSON object (an
    aged call's stub) travel as ``{"arguments": text}``. A reply's Anthropic reasoning
    blocks lead its AI message's content, and its parallel calls stay in that message.

    >>> from ctxrules.render import TextBlock, ToolResultBlock, ToolUseBlock
    >>> out = to_langchain([
    ...     Message("user", (TextBlock("List the files."),)),
    ...     Message("assistant", (ToolUseBlock("c1", "ls", '{"path": "."}'),)),
    ...     Message("tool", (ToolResultBlock("c1", "a.py"),)),
    ... ])
    >>> [(m.type, m.text) for m in out], out[1].tool_calls[0]["args"], out[2].tool_call_id
    ([('human', 'List the files.'), ('ai', ''), ('tool', 'a.py')], {'path': '.'}, 'c1')
    """
    return KeptForms().convert(messages)


def from_openai_message(params: Mapping[str, object]) -> BaseMessage:
    """One Chat Completions message as the LangChain message `to_langchain` makes of it."""
    role, content = params["role"], params.get("content")
    text = content if isinstance(content, str) else ""
    if role == "assistant":
        return AIMessage(text, tool_calls=_tool_calls(params.get("tool_calls")))
    if role == "tool":
        return ToolMessage(text, tool_call_id=str(params["tool_call_id"]))
    if role == "system":
        return SystemMessage(text)
    return HumanMessage(text)


def reasoned_message(params: Mapping[str, object], blocks: Sequence[ThinkingBlock]) -> AIMessage:
    """An assistant message with its reasoning blocks first, as ``ChatAnthropic`` returned them.

    >>> block = ThinkingBlock('{"signature":"s","thinking":"Hm.","type":"thinking"}', "Hm.")
    >>> reasoned_message({"role": "assistant", "content": "Reading."}, [block]).content
    [{'signature': 's', 'thinking': 'Hm.', 'type': 'thinking'}, {'type': 'text', 'text': 'Reading.'}]
    """
    content: list[str | dict[str, Any]] = [json.loads(block.raw) for block in blocks]
    text = params.get("content")
    if isinstance(text, str) and text:
        content.append({"type": "text", "text": text})
    return AIMessage(content, tool_calls=_tool_calls(params.get("tool_calls")))


class KeptForms:
    """`to_langchain` for one conversation, converting only what the last call did not send.

    The engine keeps each rendered message's Chat Completions form with its items, the same
    read-only object in every request that holds it; its LangChain message is made once and
    sent again while that form is. Converting every message on every call cost a
    ``create_agent`` loop about 20 µs a message: 15 ms a call at 1,000 messages.
    """

    def __init__(self) -> None:
        #: The forms of the last call by identity, each held so its id stays its own, with
        #: the reasoning blocks its message was made with.
        self._last: dict[int, tuple[Mapping[str, object], _Reasoning, BaseMessage]] = {}
        #: The joined replies of the last call, by their first message's id (`_replies_joined`).
        self._joined: dict[int, tuple[tuple[BaseMessage, ...], AIMessage]] = {}

    def convert(self, messages: Sequence[Message]) -> list[BaseMessage]:
        """``to_langchain(messages)``, the messages of forms sent last time taken as they were."""
        if _reasons(messages):
            return self._reasoned(messages)
        out: list[BaseMessage] = []
        kept: dict[int, tuple[Mapping[str, object], _Reasoning, BaseMessage]] = {}
        last = self._last
        for params in to_openai(messages):
            found = last.get(id(params))
            made = found[2] if found is not None and found[0] is params and not found[1] else None
            if made is None:
                made = from_openai_message(params)
            kept[id(params)] = (params, (), made)
            out.append(made)
        self._last = kept
        return out

    def _reasoned(self, messages: Sequence[Message]) -> list[BaseMessage]:
        """`convert` of a context with reasoning blocks: each reply's lead its AI message.

        ``to_openai`` sends each call after a reply's first as a message of its own (a tool
        item renders as its own call and result); ChatAnthropic makes each AI message an
        assistant turn, and with thinking on the API refuses a turn of calls that does not
        start with its reply's reasoning. So an AI message of calls only, right after the
        results of a reasoning reply (or of a call joined to one) and followed by its own
        results, joins that reply's message, and all their results come after it.
        """
        out: list[BaseMessage] = []
        kept: dict[int, tuple[Mapping[str, object], _Reasoning, BaseMessage]] = {}
        joined: dict[int, tuple[tuple[BaseMessage, ...], AIMessage]] = {}
        last, reasoning = self._last, iter(reasoning_of(messages))
        forms = to_openai(messages)
        group: list[BaseMessage] = []
        results: list[BaseMessage] = []
        for at, params in enumerate(forms):
            role = params["role"]
            blocks: _Reasoning = next(reasoning) if role == "assistant" else ()
            found = last.get(id(params))
            made = (
                found[2]
                if found is not None and found[0] is params and found[1] == blocks
                else None
            )
            if made is None:
                made = reasoned_message(params, blocks) if blocks else from_openai_message(params)
            kept[id(params)] = (params, blocks, made)
            if group:
                if role == "tool":
                    results.append(made)
                    continue
                if (
                    results
                    and role == "assistant"
                    and not blocks
                    and params.get("tool_calls")
                    and not params.get("content")
                    and at + 1 < len(forms)
                    and forms[at + 1]["role"] == "tool"
                ):
                    group.append(made)
                    continue
                out.append(self._reply(group, joined))
                out.extend(results)
                group, results = [], []
            if blocks and params.get("tool_calls"):
                group.append(made)
            else:
                out.append(made)
        if group:
            out.append(self._reply(group, joined))
            out.extend(results)
        self._last, self._joined = kept, joined
        return out

    def _reply(
        self,
        group: list[BaseMessage],
        joined: dict[int, tuple[tuple[BaseMessage, ...], AIMessage]],
    ) -> BaseMessage:
        """One AI message of the group's calls, made once while its parts are the same objects."""
        first = group[0]
        if len(group) == 1:
            return first
        parts = tuple(group)
        found = self._joined.get(id(first))
        if found is not None and found[0] == parts:  # compared by identity first
            made = found[1]
        else:
            calls = [call for message in group for call in message.tool_calls]  # type: ignore[attr-defined]
            made = AIMessage(first.content, tool_calls=calls)
        joined[id(first)] = (parts, made)
        return made


#: The reasoning blocks of one assistant message.
_Reasoning = tuple[ThinkingBlock, ...]
#: The key under which a chunk keeps whether its visible part holds reasoning blocks.
_REASONS_KEY = "langchain_reasons"


def _reasons(messages: Sequence[Message]) -> bool:
    """Whether any message holds a reasoning block: per chunk once, for a commit's messages."""
    if not isinstance(messages, RenderedMessages):
        return any(type(b) is ThinkingBlock for message in messages for b in message.blocks)
    for part, low, high in messages.spans:
        if isinstance(part, Chunk):
            # Chunks never change: a turn looks at the chunk its new items went to.
            memo, key = part.memo, f"{_REASONS_KEY}@{low}:{high}"
            held = memo.get(key)
            if held is None:
                held = memo[key] = any(item.thinking for item in part[low:high])
        else:
            held = any(item.thinking for item in part[low:high])
        if held:
            return True
    return False


def reasoning_of(messages: Sequence[Message]) -> list[_Reasoning]:
    """The reasoning blocks of each assistant message `to_openai` makes of ``messages``, in order.

    ``to_openai`` makes one message of each run of consecutive assistant messages that has
    text or a tool call (a run with neither is dropped): that run's blocks, in order.

    >>> block = ThinkingBlock('{"data":"x","type":"redacted_thinking"}', "x")
    >>> reasoning_of([Message("user", (TextBlock("Go."),)), Message("assistant", (block,)),
    ...     Message("assistant", (ToolUseBlock("c1", "ls", "{}"),))]) == [(block,)]
    True
    """
    out: list[_Reasoning] = []
    held: list[ThinkingBlock] = []
    speaks = within = False
    for message in messages:
        if message.role != "assistant":
            if within and speaks:
                out.append(tuple(held))
            held, speaks, within = [], False, False
            continue
        within = True
        for block in message.blocks:
            kind = type(block)
            if kind is ThinkingBlock:
                held.append(block)  # type: ignore[arg-type]
            elif kind is ToolUseBlock or (kind is TextBlock and block.text):  # type: ignore[union-attr]
                speaks = True
    if within and speaks:
        out.append(tuple(held))
    return out


def _tool_calls(calls: object) -> list[dict[str, object]]:
    if not isinstance(calls, list):
        return []
    out: list[dict[str, object]] = []
    for call in calls:
        function = call["function"]
        out.append(
            {"name": function["name"], "args": _arguments(function["arguments"]), "id": call["id"]}
        )
    return out


def _arguments(text: str) -> dict[str, object]:
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {"arguments": text}
