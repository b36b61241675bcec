"""Translate neutral messages into OpenAI Chat Completions message params."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from itertools import islice
from typing import Any, ClassVar, NoReturn

from immutables import Map

from ctxrules.commit.item import ContextItem
from ctxrules.commit.vector import CHUNK, Chunk
from ctxrules.render.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from ctxrules.render.pairing import blocks_of, degrade_orphans, run_end
from ctxrules.render.render import RenderedMessages, item_messages

#: The key under which an item keeps its Chat Completions messages (`ContextItem.remember`).
OPENAI_KEY = "openai"
#: A Chat Completions message param.
OpenAIMessage = dict[str, object]


class _Shared:
    """What `KeptMessage` and `KeptList` share: every change raises; copies and pickles are plain."""

    __slots__ = ()
    #: The plain type a copy is.
    _plain: ClassVar[type[Any]]
    #: The error's words: what the value is, and how to change a copy.
    _what: ClassVar[tuple[str, str]]

    def __copy__(self) -> object:
        return self._plain(self)

    def __deepcopy__(self, memo: dict[int, object]) -> object:
        return copy.deepcopy(self._plain(self), memo)

    def __reduce__(self) -> tuple[type[Any], tuple[object]]:
        return self._plain, (self._plain(self),)


def _refuse(self: _Shared, *_: object, **__: object) -> NoReturn:
    """Every change of a `_Shared` value: a `TypeError` saying how to change a copy."""
    name, advice = self._what
    msg = f"this {name} is shared with later requests; change a copy: {advice}"
    raise TypeError(msg)


class KeptMessage(_Shared, dict[str, object]):
    """A Chat Completions message kept with its items: shared by every request they are in.

    Read-only, so that changing one request can never change a later one; ``dict(message)``
    is a copy to change. Copies and pickles are plain dicts.

    >>> message = KeptMessage(role="user", content="hi")
    >>> message == {"role": "user", "content": "hi"}, dict(message) | {"content": "hey"}
    (True, {'role': 'user', 'content': 'hey'})
    >>> message["content"] = "hey"
    Traceback (most recent call last):
    TypeError: this message is shared with later requests; change a copy: dict(message)
    """

    __slots__ = ()
    _plain = dict
    _what = ("message", "dict(message)")
    __setitem__ = __delitem__ = setdefault = update = pop = popitem = clear = __ior__ = _refuse


class KeptList(_Shared, list[object]):
    """A list inside a kept message (its tool calls, its content blocks): read-only as it is.

    Still a ``list`` to SDKs and a JSON array to encoders; ``list(value)`` is a copy to
    change. Copies and pickles are plain lists.

    >>> import json
    >>> calls = KeptList([{"id": "c1"}])
    >>> calls == [{"id": "c1"}], isinstance(calls, list), json.dumps(calls)
    (True, True, '[{"id": "c1"}]')
    >>> calls.append({"id": "c2"})
    Traceback (most recent call last):
    TypeError: this list is shared with later requests; change a copy: list(value)
    """

    __slots__ = ()
    _plain = list
    _what = ("list", "list(value)")
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse


def kept(value: object) -> object:
    """``value`` with every dict in it a `KeptMessage` and every list a `KeptList`, once shared.

    >>> message = kept({"role": "assistant", "tool_calls": [{"function": {"name": "ls"}}]})
    >>> type(message).__name__, type(message["tool_calls"]).__name__
    ('KeptMessage', 'KeptList')
    """
    if isinstance(value, dict):
        if type(value) is KeptMessage:
            return value
        return KeptMessage({key: kept(item) for key, item in value.items()})
    if isinstance(value, list):
        if type(value) is KeptList:
            return value
        return KeptList([kept(item) for item in value])
    return value


def kept_message(message: OpenAIMessage) -> KeptMessage:
    """`kept` of one message (a dict, so a `KeptMessage`)."""
    return kept(message)  # type: ignore[return-value]


def to_openai(messages: Sequence[Message]) -> list[dict[str, object]]:
    """Chat Completions ``messages``: consecutive assistant messages merge into one.

    Text blocks join with a blank line; a degraded tool result is sent as user text after
    the tool messages of its turn, and a message with nothing to say is dropped.

    >>> to_openai([
    ...     Message("user", (TextBlock("List the files."),)),
    ...     Message("assistant", (ToolUseBlock("c1", "ls", '{"path": "."}'),)),
    ...     Message("tool", (ToolResultBlock("c1", "a.py"),)),
    ... ])  # doctest: +NORMALIZE_WHITESPACE
    [{'role': 'user', 'content': 'List the files.'},
     {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'c1', 'type': 'function',
       'function': {'name': 'ls', 'arguments': '{"path": "."}'}}]},
     {'role': 'tool', 'tool_call_id': 'c1', 'content': 'a.py'}]
    """
    if isinstance(messages, RenderedMessages):
        spans = messages.spans
        chunked = all(isinstance(part, Chunk) for part, _, _ in spans)
        converted = _from_spans(spans) if chunked else _from_items(messages.items)  # type: ignore[arg-type]
        if converted is not None:
            return converted
    return _convert(messages)


def _from_spans(spans: Sequence[tuple[Chunk, int, int]]) -> list[OpenAIMessage] | None:
    """`_from_items` over a commit's chunks: each visible part of a chunk joined once.

    The joined part is kept with its chunk (chunks never change), so a turn joins only the
    chunk its new items went to, and that one from where the last turn's join ended.
    """
    out: list[OpenAIMessage] = []
    seen: Map[str, None] = _NO_IDS
    for chunk, low, high in spans:
        whole = low == 0 and high == len(chunk)
        key = RUN_KEY if whole else f"{RUN_KEY}@{low}:{high}"
        memo = chunk.memo
        kept: _Run | None = memo.get(key)  # type: ignore[assignment]
        if kept is None:
            kept = _tail_joined(chunk, high) if whole else _joined(chunk[low:high])
            if kept is None:
                return None
            memo[key] = kept
        checked = _checked_in(memo, f"{CHECKED_KEY}@{low}:{high}", seen, kept)
        if checked is None:
            return None
        seen = checked
        _append_run(out, kept[1], memo, f"{MERGED_KEY}@{low}:{high}")
    return out


def _append_run(
    out: list[OpenAIMessage],
    converted: tuple[OpenAIMessage, ...],
    memo: dict[str, object] | None = None,
    key: str = "",
) -> None:
    """``converted`` after ``out``, an assistant message next to another merged into it.

    The merge is kept in ``memo`` under ``key`` (the run's) with the two messages it joined:
    a run boundary that falls inside an assistant turn joins the same two kept messages on
    every turn, and sends the same merged one, as any other kept message is sent.
    """
    if not converted:
        return
    first = converted[0]
    if out and first["role"] == "assistant" and out[-1]["role"] == "assistant":
        before = out[-1]
        found = memo.get(key) if memo is not None else None
        if isinstance(found, tuple) and found[0] is before and found[1] is first:
            out[-1] = found[2]
        else:
            out[-1] = _merged(before, first)
            if memo is not None:
                memo[key] = (before, first, out[-1])
        out.extend(islice(converted, 1, None))
    else:
        out.extend(converted)


def _tail_joined(chunk: Chunk, high: int) -> _Run | None:
    """The run of ``chunk[:high]``, extending the join a shorter version of it left.

    The chunk that takes a session's new items is a new tuple each turn; the join of the
    last one is kept with its last item (and moved on to this one's), so only the new
    items are joined.
    """
    run = tuple(chunk[:high])
    start = 0
    found: _Run | None = None
    # Back from the end: a turn adds a few items, so the last join ended a few items back.
    for end in range(high, 0, -1):
        memo = run[end - 1].memo
        found = memo.get(TAIL_KEY) if memo is not None else None  # type: ignore[assignment]
        if found is not None:
            if found[0] == run[:end]:
                start = end
                break
            found = None
    kept = _joined(run[start:], found)
    if kept is None:
        return None
    if found is not None:
        memo = run[start - 1].memo
        assert memo is not None  # noqa: S101 - found there
        del memo[TAIL_KEY]
    if high < CHUNK:
        run[-1].remember(TAIL_KEY, kept)
    return kept


def _from_items(items: Sequence[ContextItem]) -> list[OpenAIMessage] | None:
    """The messages of rendered items, each item converted once; None if pairs need repair.

    Each item renders as self-contained messages (a tool item as its own call and result),
    so the only repair that crosses items is a call id used twice: then None, and the
    caller converts message by message. Consecutive assistant messages of two items merge,
    as `_convert` merges them. The items are joined by runs of `_RUN` (kept with a run's
    first item), so a turn joins the runs that changed, not every item; the messages are
    the kept ones (`KeptMessage`, read-only), never copied: a copy of each would touch
    every text sent, every turn.
    """
    out: list[OpenAIMessage] = []
    seen: Map[str, None] = _NO_IDS
    for start in range(0, len(items), _RUN):
        run = tuple(items[start : start + _RUN])
        memo = run[0].memo
        kept: _Run | None = memo.get(RUN_KEY) if memo is not None else None  # type: ignore[assignment]
        # Equal when the items are the same objects (compared by identity first), as they
        # are from turn to turn until a batch point or a compaction.
        if kept is None or kept[0] != run:
            kept = _joined(run)
            if kept is None:
                return None
            run[0].remember(RUN_KEY, kept)
        checked = _checked(run[0], seen, kept)
        if checked is None:
            return None
        seen = checked
        # `_checked` kept its check in the run's first item's memo: the merge goes beside it.
        _append_run(out, kept[1], run[0].memo, MERGED_KEY)
    return out


def _checked(first: ContextItem, before: Map[str, None], kept: _Run) -> Map[str, None] | None:
    """The call ids through this run, or None when one was used before it.

    The check is kept with the run's first item beside the ids it started from: a turn
    that sends the same runs after the same ones finds it and checks only the changed tail.
    """
    if first.memo is None:
        object.__setattr__(first, "memo", {})
    return _checked_in(first.memo, CHECKED_KEY, before, kept)  # type: ignore[arg-type]


def _checked_in(
    memo: dict[str, object], key: str, before: Map[str, None], kept: _Run
) -> Map[str, None] | None:
    """`_checked` with the check kept in ``memo`` under ``key``."""
    known: _Checked | None = memo.get(key)  # type: ignore[assignment]
    if known is not None and known[0] is before and known[1] is kept:
        return known[2]
    call_ids = kept[2]
    if any(call_id in before for call_id in call_ids):
        return None
    after = before.update(dict.fromkeys(call_ids)) if call_ids else before
    memo[key] = (before, kept, after)
    return after


#: Items per run joined once and kept: small enough that a changed run costs little.
_RUN = 64
#: The key under which a run's first item keeps the run joined (`ContextItem.remember`).
RUN_KEY = "openai_run"
#: A run of items, their messages joined (merges done), and the tool call ids among them.
_Run = tuple[tuple[ContextItem, ...], tuple[OpenAIMessage, ...], frozenset[str]]
#: The key under which the last item of a chunk still growing keeps the chunk's join so far.
TAIL_KEY = "openai_tail"
#: The key under which a run's first item keeps its pairing check (`_checked`).
CHECKED_KEY = "openai_checked"
#: The key under which a run keeps its first message merged into the message before it.
MERGED_KEY = "openai_merged"
#: The call ids before a run, the run checked, and the call ids through it.
_Checked = tuple[Map[str, None], _Run, Map[str, None]]
_NO_IDS: Map[str, None] = Map()


def _joined(run: tuple[ContextItem, ...], after: _Run | None = None) -> _Run | None:
    """The run's items' kept forms joined, merging assistant neighbours; None on a repeated id.

    ``after`` is the joined run these items follow: the result is the join of both.
    """
    out: list[OpenAIMessage] = list(after[1]) if after is not None else []
    seen: set[str] = set(after[2]) if after is not None else set()
    for item in run:
        memo = item.memo
        parts: _Parts | None = memo.get(OPENAI_KEY) if memo is not None else None  # type: ignore[assignment]
        converted, call_ids = parts if parts is not None else _parts(item)
        for call_id in call_ids:
            if call_id in seen:
                return None
            seen.add(call_id)
        if not converted:
            continue
        first = converted[0]
        if out and first["role"] == "assistant" and out[-1]["role"] == "assistant":
            out[-1] = _merged(out[-1], first)
            out.extend(converted[1:])
        else:
            out.extend(converted)
    return (after[0] + run if after is not None else run), tuple(out), frozenset(seen)


#: An item's converted messages and the tool call ids among them.
_Parts = tuple[tuple[OpenAIMessage, ...], tuple[str, ...]]


def _parts(item: ContextItem) -> _Parts:
    """The item's messages converted alone, once per item (kept with the item)."""
    messages = item_messages(item)
    converted = _plain_parts(messages)
    if converted is None:
        converted = tuple(map(kept_message, _convert(messages)))
    call_ids = tuple(
        str(call["id"])
        for message in converted
        for call in message.get("tool_calls", ())  # type: ignore[attr-defined]
    )
    parts: _Parts = (converted, call_ids)
    item.remember(OPENAI_KEY, parts)
    return parts


def _plain_parts(messages: tuple[Message, ...]) -> tuple[OpenAIMessage, ...] | None:
    """`_convert` of an item's messages in the two common shapes, without its repair pass.

    One text message, or a tool call with its own result: nothing to repair or merge, so
    the result is the one `_convert` gives. Any other shape is None.
    """
    if len(messages) == 1:
        message = messages[0]
        blocks = message.blocks
        if len(blocks) == 1 and type(blocks[0]) is TextBlock and message.role != "tool":
            text = blocks[0].text
            return (KeptMessage(role=message.role, content=text),) if text else ()
        return None
    if len(messages) == 2:  # a call and its result
        call, result = messages
        if (
            call.role == "assistant"
            and result.role == "tool"
            and len(call.blocks) == 1
            and len(result.blocks) == 1
            and type(use := call.blocks[0]) is ToolUseBlock
            and type(answer := result.blocks[0]) is ToolResultBlock
            and use.id
            and use.id == answer.tool_use_id
        ):
            function = KeptMessage(name=use.name, arguments=use.arguments)
            sent = KeptMessage(id=use.id, type="function", function=function)
            return (
                KeptMessage(role="assistant", content=None, tool_calls=KeptList([sent])),
                KeptMessage(role="tool", tool_call_id=use.id, content=answer.text),
            )
    return None


def _merged(first: OpenAIMessage, second: OpenAIMessage) -> OpenAIMessage:
    """Two consecutive assistant messages as one, as `_assistant` builds it from their run."""
    texts = [text for text in (first["content"], second["content"]) if text]
    calls = [*first.get("tool_calls", ()), *second.get("tool_calls", ())]  # type: ignore[misc]
    if not calls:
        return KeptMessage(role="assistant", content="\n\n".join(texts))  # type: ignore[arg-type]
    merged = KeptList(calls)
    return KeptMessage(role="assistant", content="\n\n".join(texts) or None, tool_calls=merged)  # type: ignore[arg-type]


def _convert(messages: Sequence[Message]) -> list[OpenAIMessage]:
    """`to_openai` message by message: pairs repaired, runs of a role merged."""
    repaired = degrade_orphans(messages)
    out: list[dict[str, object]] = []
    start = 0
    while start < len(repaired):
        role = repaired[start].role
        end = run_end(repaired, start, role)
        run = repaired[start:end]
        if role == "assistant":
            out.extend(_assistant(run))
        elif role == "tool":
            out.extend(
                {"role": "tool", "tool_call_id": block.tool_use_id, "content": block.text}
                for block in blocks_of(run, ToolResultBlock)
            )
            # Degraded results wait until the turn's tool messages are done: text between
            # them would cut the later results off from their calls.
            out.extend(_text_message("user", _texts(run)))
        else:
            for message in run:
                out.extend(_text_message(role, _texts((message,))))
        start = end
    return out


def _assistant(run: Sequence[Message]) -> list[dict[str, object]]:
    """One assistant message for a run of them, or none when it would be empty."""
    texts = _texts(run)
    calls = [
        {
            "id": block.id,
            "type": "function",
            "function": {"name": block.name, "arguments": block.arguments},
        }
        for block in blocks_of(run, ToolUseBlock)
    ]
    if not calls:
        return _text_message("assistant", texts)
    return [{"role": "assistant", "content": "\n\n".join(texts) or None, "tool_calls": calls}]


def _text_message(role: str, texts: list[str]) -> list[dict[str, object]]:
    """A message of the joined texts, or none when there are none."""
    return [{"role": role, "content": "\n\n".join(texts)}] if texts else []


def _texts(messages: Sequence[Message]) -> list[str]:
    """The non-empty texts of the messages' text blocks, in order."""
    return [block.text for block in blocks_of(messages, TextBlock) if block.text]
