"""Translate neutral messages into the ``system`` and ``messages`` of an Anthropic request."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

import attrs
from immutables import Map

from ctxrules.commit.item import ContextItem
from ctxrules.commit.vector import Chunk
from ctxrules.render.item import THINKING_TYPES
from ctxrules.render.messages import Block, Message, TextBlock, ThinkingBlock, ToolUseBlock
from ctxrules.render.openai import KeptList, KeptMessage, kept_message
from ctxrules.render.pairing import degrade_orphans
from ctxrules.render.render import RenderedMessages, item_messages

#: The user message put first when a conversation starts with the assistant.
CONTINUED = "(continued)"

# The Messages API rejects tool ids outside this pattern, so such pairs are degraded.
_TOOL_ID = re.compile(r"[a-zA-Z0-9_-]+")

#: A content block and the index of the neutral message it came from.
_Sourced = tuple[int, dict[str, object]]

#: A role and its content blocks.
_Turn = tuple[str, list[_Sourced]]


@attrs.frozen
class AnthropicRequest:
    """The ``system`` and ``messages`` arguments of ``client.messages.create``."""

    system: list[dict[str, object]]
    messages: list[dict[str, object]]


def to_anthropic(
    messages: Sequence[Message],
    *,
    cache_system: bool = False,
    cache_prefix_end: int | None = None,
    cache_newest: bool = False,
) -> AnthropicRequest:
    """Pull the system text out and merge the rest into alternating user and assistant turns.

    ``cache_system`` marks the last system block, ``cache_prefix_end`` the last block that
    comes from ``messages[:cache_prefix_end + 1]``, with an ephemeral cache breakpoint.
    ``cache_newest`` also marks the last block, so the next request (which only grows at
    its end until the next batch point) reads the whole of this one from the cache; pass
    the stable part (`ctxrules.cache.stable_prefix_end`) as ``cache_prefix_end``.
    From a rendered commit the blocks are the ones its chunks keep, read-only and shared
    with later requests; a marked block is a new one.

    >>> from ctxrules.render.messages import ToolResultBlock
    >>> request = to_anthropic([
    ...     Message("system", (TextBlock("Be brief."),)),
    ...     Message("user", (TextBlock("List the files."),)),
    ...     Message("assistant", (ToolUseBlock("c1", "ls", '{"path": "."}'),)),
    ...     Message("tool", (ToolResultBlock("c1", "a.py"),)),
    ... ], cache_prefix_end=1)
    >>> request.system
    [{'type': 'text', 'text': 'Be brief.'}]
    >>> request.messages  # doctest: +NORMALIZE_WHITESPACE
    [{'role': 'user', 'content': [{'type': 'text', 'text': 'List the files.',
                                   'cache_control': {'type': 'ephemeral'}}]},
     {'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 'c1', 'name': 'ls',
                                        'input': {'path': '.'}}]},
     {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 'c1',
                                   'content': 'a.py'}]}]
    """
    if cache_prefix_end is not None and not 0 <= cache_prefix_end < len(messages):
        msg = (
            f"cache_prefix_end={cache_prefix_end} is out of range; pass None or an index"
            f" of messages, 0 <= cache_prefix_end < {len(messages)}"
        )
        raise ValueError(msg)
    # Marks on the last blocks only (a prefix ending with the last message marks the last
    # block): then each chunk's join is kept, and only the last turn is built anew.
    if isinstance(messages, RenderedMessages) and cache_prefix_end in {None, len(messages) - 1}:
        spans = messages.spans
        if all(isinstance(part, Chunk) for part, _, _ in spans):
            joined = _from_spans(spans)  # type: ignore[arg-type]
            if joined is not None:
                newest = cache_newest or cache_prefix_end is not None
                head, done, last, reasons = joined
                made = _request(head, done, last, cache_system=cache_system, cache_newest=newest)
                # Only a reasoning reply's calls are joined: other requests skip the pass.
                return (
                    attrs.evolve(made, messages=_parallel_joined(made.messages))
                    if reasons
                    else made
                )
    gathered = _from_items(messages.items) if isinstance(messages, RenderedMessages) else None
    system, turns = gathered or _gather(degrade_orphans(messages, valid_id=_valid_id))
    order = system + [sourced for _, blocks in turns for sourced in blocks]
    marks: set[int] = set()
    if cache_system and system:
        marks.add(len(system) - 1)
    if cache_prefix_end is not None:
        stable = [
            pos
            for pos, (origin, block) in enumerate(order)
            if origin <= cache_prefix_end and _markable(block)
        ]
        marks.update(stable[-1:])
    if cache_newest:
        marks.update([pos for pos, (_, block) in enumerate(order) if _markable(block)][-1:])
    marked = iter(
        {**block, "cache_control": {"type": "ephemeral"}} if pos in marks else block
        for pos, (_, block) in enumerate(order)
    )
    return AnthropicRequest(
        system=[next(marked) for _ in system],
        messages=_parallel_joined(
            [{"role": role, "content": [next(marked) for _ in blocks]} for role, blocks in turns]
        ),
    )


def _parallel_joined(messages: list[dict[str, object]]) -> list[dict[str, object]]:
    """``messages`` with a reasoning reply's calls in its one message, their results in the next.

    Each call renders as its own use and result, so a reply's parallel calls come as turns
    of one call each; with thinking on, the API refuses the second call's turn (it does not
    start with the reply's reasoning block). A turn of uses only, between the results of a
    turn that starts with reasoning and its own results, joins that turn; others stay as
    they are, so requests without reasoning blocks are unchanged.
    """
    out: list[dict[str, object]] = []
    at, size = 0, len(messages)
    while at < size:
        message = messages[at]
        # The checks that read one block first: most turns fail them, and a long turn's
        # blocks are read only when its neighbours already fit.
        if (
            len(out) >= 2  # the reasoning turn and its results
            and at + 1 < size
            and message["role"] == "assistant"
            and _starts_with(out[-2]["content"], THINKING_TYPES)
            and _starts_with(messages[at + 1]["content"], _RESULT)
            and _all_of(message["content"], "tool_use")
            and _all_of(out[-1]["content"], "tool_result")
        ):
            # New messages and lists: those joined may be shared with later requests.
            reply, results, more = out[-2]["content"], out[-1]["content"], messages[at + 1]
            out[-2] = {"role": "assistant", "content": [*reply, *message["content"]]}  # type: ignore[misc]
            out[-1] = {"role": "user", "content": [*results, *more["content"]]}  # type: ignore[misc]
            at += 2
            continue
        out.append(message)
        at += 1
    return out


def _all_of(content: object, kind: str) -> bool:
    """Whether ``content`` is a non-empty list of blocks all of type ``kind``."""
    return isinstance(content, list) and bool(content) and all(b["type"] == kind for b in content)


def _starts_with(content: object, kinds: frozenset[str]) -> bool:
    """Whether ``content`` is a list of blocks whose first is of one of ``kinds``."""
    return isinstance(content, list) and bool(content) and content[0]["type"] in kinds


#: A tool result's type, as `_starts_with` asks for types.
_RESULT = frozenset({"tool_result"})


def tool_input(arguments: str) -> dict[str, object]:
    """The ``input`` object of a tool call: its parsed arguments, or the raw text when cut.

    >>> tool_input('{"path": "src/main.py"}')
    {'path': 'src/main.py'}
    >>> tool_input('{"path": "src/ma…')
    {'arguments': '{"path": "src/ma…'}
    """
    try:
        value: object = json.loads(arguments, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return {"arguments": arguments}
    return value if isinstance(value, dict) else {"arguments": arguments}


def _gather(messages: Sequence[Message]) -> tuple[list[_Sourced], list[_Turn]]:
    """The system blocks and the alternating turns, each block tagged with its message index."""
    system: list[_Sourced] = []
    turns: list[_Turn] = []
    for index, message in enumerate(messages):
        _add(system, turns, index, message.role, tuple(map(_content, message.blocks)))
    return _finish(system, turns)


#: The key under which an item keeps its Anthropic content blocks (`ContextItem.remember`).
ANTHROPIC_KEY = "anthropic"
#: An item's repaired messages as (role, content blocks), and the tool call ids among them.
#: One kept message: its role and its blocks (None for a block left out).
_Part = tuple[str, tuple[dict[str, object] | None, ...]]
_Parts = tuple[tuple[_Part, ...], tuple[str, ...]]


def _unique_parts(items: Sequence[ContextItem]) -> tuple[list[_Part], set[str]] | None:
    """The items' kept messages in order and their call ids; None when an id is used twice."""
    seen: set[str] = set()
    messages: list[_Part] = []
    for item in items:
        parts, call_ids = _kept_parts(item)
        for call_id in call_ids:
            if call_id in seen:
                return None
            seen.add(call_id)
        messages.extend(parts)
    return messages, seen


def _from_items(items: Sequence[ContextItem]) -> tuple[list[_Sourced], list[_Turn]] | None:
    """`_gather` of rendered items, each item's blocks built once; None if pairs need repair.

    An item renders as self-contained messages (a tool item as its own call and result), so
    it is repaired alone; the only repair that crosses items is a call id used twice, and
    then the caller repairs message by message.
    """
    found = _unique_parts(items)
    if found is None:
        return None
    system: list[_Sourced] = []
    turns: list[_Turn] = []
    for index, (role, blocks) in enumerate(found[0]):
        _add(system, turns, index, role, blocks)
    return _finish(system, turns)


def _kept_parts(item: ContextItem) -> _Parts:
    """The item's converted messages: kept with it, or converted now (`_parts`)."""
    memo = item.memo
    parts: _Parts | None = memo.get(ANTHROPIC_KEY) if memo is not None else None  # type: ignore[assignment]
    return parts if parts is not None else _parts(item)


def _parts(item: ContextItem) -> _Parts:
    """The item's messages repaired alone and their blocks converted, once per item."""
    repaired = degrade_orphans(item_messages(item), valid_id=_valid_id)
    # Read-only: the chunk join (`_from_spans`) sends these very blocks in every request.
    messages = tuple((m.role, tuple(map(_kept_block, m.blocks))) for m in repaired)
    call_ids = tuple(b.id for m in repaired for b in m.blocks if isinstance(b, ToolUseBlock))
    parts: _Parts = (messages, call_ids)
    item.remember(ANTHROPIC_KEY, parts)
    return parts


def _add(
    system: list[_Sourced],
    turns: list[_Turn],
    index: int,
    role: str,
    contents: Sequence[dict[str, object] | None],
) -> None:
    """Add one message's content blocks: to the system, or merged into the alternating turns."""
    # Blocks are copied: the ones an item keeps are shared by every request it is in.
    blocks = [(index, dict(content)) for content in contents if content is not None]
    if role == "system":
        system.extend(blocks)
        return
    side = "assistant" if role == "assistant" else "user"
    if turns and turns[-1][0] == side:
        turns[-1][1].extend(blocks)
    elif blocks:
        turns.append((side, blocks))


def _finish(system: list[_Sourced], turns: list[_Turn]) -> tuple[list[_Sourced], list[_Turn]]:
    """The gathered turns starting with a user turn, tool results before text in each."""
    if turns and turns[0][0] == "assistant":
        # It belongs to the assistant message it stands before, so a cache breakpoint
        # set earlier does not move onto it when that message is appended later.
        first = turns[0][1][0][0]
        turns.insert(0, ("user", [(first, {"type": "text", "text": CONTINUED})]))
    # The API wants a user turn's tool results before its text, and an assistant turn's
    # reasoning blocks before the rest (a summary merged in before them); sorting is stable.
    return system, [(role, sorted(blocks, key=_text_last)) for role, blocks in turns]


#: The key under which a chunk keeps its visible part gathered (`_Piece`).
PIECE_KEY = "anthropic_piece"
#: The key under which a chunk keeps its call-id check (`_checked`).
CHECKED_KEY = "anthropic_checked"
#: A content block as sent.
_Block = dict[str, object]
#: A turn that may still merge with a neighbour: its side, the blocks it sends first (tool
#: results, reasoning; `_FIRST`) and the others.
_Open = tuple[str, tuple[_Block, ...], tuple[_Block, ...]]
_NO_IDS: Map[str, None] = Map()


@attrs.frozen
class _Piece:
    """A chunk's visible part gathered once: what `_gather` makes of it, ready to join.

    Only the first and last turns can merge with a neighbouring chunk's, so they stay
    open (results and other blocks apart, as `_finish` sorts them); the turns between are
    kept as sent.
    """

    system: tuple[_Block, ...]
    first: _Open | None
    middle: tuple[_Block, ...]
    last: _Open | None
    call_ids: frozenset[str]
    #: Whether it holds a reasoning block (then `_parallel_joined` looks at the request).
    reasons: bool = False


def _from_spans(
    spans: Sequence[tuple[Chunk, int, int]],
) -> tuple[list[_Block], list[_Block], _Open | None, bool] | None:
    """`_from_items` over a commit's chunks, each chunk's part gathered once and kept with it.

    The system blocks, the finished turns but the last, the last turn still open, and
    whether any reasoning block is among them; None when a call id is used twice. A turn
    joins the kept pieces (chunks never change) and gathers only the chunks its new or
    changed items are in.
    """
    system: list[_Block] = []
    out: list[_Block] = []
    pending: _Open | None = None
    seen = _NO_IDS
    reasons = False
    for chunk, low, high in spans:
        memo = chunk.memo
        key = PIECE_KEY if low == 0 and high == len(chunk) else f"{PIECE_KEY}@{low}:{high}"
        piece: _Piece | None = memo.get(key)  # type: ignore[assignment]
        if piece is None:
            piece = _piece(chunk[low:high])
            if piece is None:
                return None
            memo[key] = piece
        checked = _checked(memo, f"{CHECKED_KEY}@{low}:{high}", seen, piece)
        if checked is None:
            return None
        seen = checked
        reasons = reasons or piece.reasons
        system.extend(piece.system)
        first = piece.first
        if first is None:
            continue
        if pending is not None and pending[0] == first[0]:
            # Same side: one turn across the chunk boundary, re-sorted as one.
            pending = (first[0], pending[1] + first[1], pending[2] + first[2])
        else:
            if pending is not None:
                out.append(_sent(pending))
            pending = first
        if piece.last is not None:
            out.append(_sent(pending))
            out.extend(piece.middle)
            pending = piece.last
    return system, out, pending, reasons


def _piece(items: Sequence[ContextItem]) -> _Piece | None:
    """The items gathered as `_add` and `_finish` do; None when a call id is used twice."""
    found = _unique_parts(items)
    if found is None:
        return None
    messages, seen = found
    system: list[_Block] = []
    turns: list[tuple[str, list[_Block], list[_Block]]] = []
    for role, contents in messages:
        blocks = [content for content in contents if content is not None]
        if role == "system":
            system.extend(blocks)
            continue
        side = "assistant" if role == "assistant" else "user"
        if not turns or turns[-1][0] != side:
            if not blocks:
                continue
            turns.append((side, [], []))
        _, results, others = turns[-1]
        for block in blocks:
            (results if block["type"] in _FIRST else others).append(block)
    opened = [(side, tuple(results), tuple(others)) for side, results, others in turns]
    return _Piece(
        system=tuple(system),
        first=opened[0] if opened else None,
        middle=tuple(
            KeptMessage(role=side, content=KeptList([*results, *others]))
            for side, results, others in opened[1:-1]
        ),
        last=opened[-1] if len(opened) > 1 else None,
        call_ids=frozenset(seen),
        reasons=any(b["type"] in THINKING_TYPES for _, sent, _ in opened for b in sent),
    )


def _checked(
    memo: dict[str, object], key: str, before: Map[str, None], piece: _Piece
) -> Map[str, None] | None:
    """The call ids through ``piece``, or None when one was used before it.

    Kept in ``memo`` beside the ids it started from: a turn that sends the same pieces in
    the same order finds it, and checks only the chunks that changed.
    """
    known: tuple[Map[str, None], _Piece, Map[str, None]] | None = memo.get(key)  # type: ignore[assignment]
    if known is not None and known[0] is before and known[1] is piece:
        return known[2]
    if any(call_id in before for call_id in piece.call_ids):
        return None
    after = before.update(dict.fromkeys(piece.call_ids)) if piece.call_ids else before
    memo[key] = (before, piece, after)
    return after


def _sent(turn: _Open) -> _Block:
    """The message of a gathered turn, its tool results first."""
    return {"role": turn[0], "content": [*turn[1], *turn[2]]}


def _request(
    system: list[_Block],
    messages: list[_Block],
    last: _Open | None,
    *,
    cache_system: bool,
    cache_newest: bool,
) -> AnthropicRequest:
    """The request of `_from_spans`'s join, the marks set on this request's own last blocks."""
    if last is not None:
        if (messages[0]["role"] if messages else last[0]) == "assistant":
            messages.insert(0, {"role": "user", "content": [{"type": "text", "text": CONTINUED}]})
        content = [*last[1], *last[2]]
        at = _last_markable(content)
        if cache_newest and at is not None:
            content[at] = _marked(content[at])
        messages.append({"role": last[0], "content": content})
    elif cache_newest and system:
        system[-1] = _marked(system[-1])
    if cache_system and system:
        system[-1] = _marked(system[-1])
    return AnthropicRequest(system=system, messages=messages)


def with_cache_control(request: Mapping[str, object], control: object) -> dict[str, object]:
    """``request`` with each of its cache breakpoints set to ``control`` (a 1-hour TTL, say).

    >>> with_cache_control({"system": [{"type": "text", "text": "Hi.", "cache_control": {"type":
    ...     "ephemeral"}}]}, {"type": "ephemeral", "ttl": "1h"})["system"][0]["cache_control"]
    {'type': 'ephemeral', 'ttl': '1h'}
    """
    changed: dict[str, object] = dict(request)
    system = request.get("system")
    if isinstance(system, list):
        changed["system"] = _controlled(system, control)
    messages = request.get("messages")
    if isinstance(messages, list):
        # Only a message with a breakpoint is copied: the others are shared with later requests.
        changed["messages"] = [
            {**message, "content": _controlled(content, control)}
            if isinstance(content := message.get("content"), list)
            and any("cache_control" in block for block in content)
            else message
            for message in messages
        ]
    return changed


def _controlled(blocks: list[_Block], control: object) -> list[_Block]:
    """``blocks``, each with a breakpoint given ``control`` (copies of those)."""
    return [{**b, "cache_control": control} if "cache_control" in b else b for b in blocks]


def _markable(block: _Block) -> bool:
    """Whether a breakpoint may go on the block: the API refuses one on a reasoning block."""
    return block.get("type") not in THINKING_TYPES


def _last_markable(content: Sequence[_Block]) -> int | None:
    """The index of the last block a breakpoint may go on, if any."""
    return next((i for i in range(len(content) - 1, -1, -1) if _markable(content[i])), None)


def _marked(block: _Block) -> _Block:
    """A copy of ``block`` with an ephemeral cache breakpoint."""
    return {**block, "cache_control": {"type": "ephemeral"}}


def _kept_block(block: Block) -> KeptMessage | None:
    """`_content` of the block, read-only: it is shared by every request it is in."""
    content = _content(block)
    return None if content is None else kept_message(content)


def _content(block: Block) -> dict[str, object] | None:
    """The content block for a neutral block, or None for text the API would reject as blank."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text} if block.text.strip() else None
    if isinstance(block, ThinkingBlock):
        # As the API returned it: a changed byte fails its signature.
        sent: dict[str, object] = json.loads(block.raw)
        return sent
    if isinstance(block, ToolUseBlock):
        return {
            "type": "tool_use",
            "id": block.id,
            "name": block.name,
            "input": tool_input(block.arguments),
        }
    result: dict[str, object] = {"type": "tool_result", "tool_use_id": block.tool_use_id}
    if block.is_error:
        result["is_error"] = True  # the model is told the call failed, not only its text
    # An empty result is sent without content: the API rejects blank text.
    return result | {"content": block.text} if block.text.strip() else result


def _text_last(sourced: _Sourced) -> bool:
    """Sort key that puts tool results and reasoning blocks before everything else."""
    return sourced[1]["type"] not in _FIRST


#: The blocks a turn sends first: a user turn's tool results, an assistant turn's reasoning.
_FIRST = frozenset({"tool_result", *THINKING_TYPES})


def _valid_id(tool_id: str) -> bool:
    """Whether the API accepts ``tool_id`` as a tool_use id."""
    return _TOOL_ID.fullmatch(tool_id) is not None


def _reject_constant(name: str) -> object:
    """Refuse NaN and the infinities, which are not JSON and could not be sent back."""
    msg = f"{name} is not JSON"
    raise ValueError(msg)
