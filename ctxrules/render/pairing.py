"""Pairing repair shared by the adapters: a tool call and its result travel together or not at all."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

import attrs

from ctxrules.render.messages import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock

#: The roles a neutral `Message` may have.
ROLES = ("system", "user", "assistant", "tool")

_B = TypeVar("_B", TextBlock, ToolUseBlock, ToolResultBlock)


def degrade_orphans(
    messages: Sequence[Message], *, valid_id: Callable[[str], bool] = bool
) -> tuple[Message, ...]:
    """Turn every tool call or result that lacks its partner into text, together with the partner.

    A call is kept only if its id is ``valid_id``, unique in the conversation and answered
    exactly once in the tool messages right after its assistant turn; the result is the
    same tuple of messages, one for one, with the unkept blocks as `TextBlock` s in place.

    >>> calls = Message("assistant", (ToolUseBlock("c1", "ls", "{}"),))
    >>> stray = Message("tool", (ToolResultBlock("c9", "?"),))
    >>> [m.blocks for m in degrade_orphans([calls, stray])]
    [(TextBlock(text='[tool call ls({})]'),), (TextBlock(text='[tool result c9] ?'),)]
    """
    for index, message in enumerate(messages):
        if message.role not in ROLES:
            msg = (
                f"messages[{index}].role={message.role!r} is not a neutral role;"
                f" use one of {', '.join(ROLES)}"
            )
            raise ValueError(msg)
    out = list(messages)
    sent: set[str] = set()
    start = 0
    while start < len(messages):
        if messages[start].role != "assistant":
            # user and system messages, and tool messages with no assistant turn before them.
            out[start] = _keep_only(messages[start], frozenset())
            start += 1
            continue
        tools_start = run_end(messages, start, "assistant")
        end = run_end(messages, tools_start, "tool")
        calls = Counter(b.id for b in blocks_of(messages[start:tools_start], ToolUseBlock))
        results = Counter(
            b.tool_use_id for b in blocks_of(messages[tools_start:end], ToolResultBlock)
        )
        keep = frozenset(
            call_id
            for call_id, count in calls.items()
            if count == 1 and results[call_id] == 1 and call_id not in sent and valid_id(call_id)
        )
        sent |= keep
        out[start:end] = [_keep_only(message, keep) for message in messages[start:end]]
        start = end
    return tuple(out)


def blocks_of(messages: Sequence[Message], kind: type[_B]) -> Iterator[_B]:
    """The blocks of type ``kind`` in the messages, in order."""
    return (block for message in messages for block in message.blocks if isinstance(block, kind))


def run_end(messages: Sequence[Message], start: int, role: str) -> int:
    """The index after the run of ``role`` messages that begins at ``start``."""
    end = start
    while end < len(messages) and messages[end].role == role:
        end += 1
    return end


def _keep_only(message: Message, keep: frozenset[str]) -> Message:
    """The message with every tool block not in ``keep`` (or in the wrong role) as text."""
    blocks = tuple(_degrade(block, message.role, keep) for block in message.blocks)
    return message if blocks == message.blocks else attrs.evolve(message, blocks=blocks)


def _degrade(block: Block, role: str, keep: frozenset[str]) -> Block:
    """The block itself if it is text or a kept pair's half in its proper role, else text."""
    if isinstance(block, ToolUseBlock):
        if role == "assistant" and block.id in keep:
            return block
        return TextBlock(f"[tool call {block.name}({block.arguments})]")
    if isinstance(block, ToolResultBlock):
        if role == "tool" and block.tool_use_id in keep:
            return block
        return TextBlock(f"[tool result {block.tool_use_id}] {block.text}")
    return block
