"""How one item renders: the single definition both rendering and token counting use."""

from __future__ import annotations

import json

import attrs

from ctxrules.canonical import canonical_json
from ctxrules.commit.item import ContextItem
from ctxrules.commit.state import State
from ctxrules.dag import Role
from ctxrules.render.messages import (
    Block,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    count_messages,
)
from ctxrules.tokens import Tokenizer

SUMMARY_PREFIX = "[Summary] "
#: The key under which an item keeps its rendered messages (`ContextItem.remember`).
MESSAGES_KEY = "messages"


def render_item(item: ContextItem) -> tuple[Message, ...]:
    """The messages one item contributes, independent of its neighbours.

    A tool item renders as its own call/result pair, so no state of any other item can
    orphan it; without a call id or name both sides degrade to one user text together.

    >>> render_item(ContextItem("n1", "user", rendered="hi"))
    (Message(role='user', blocks=(TextBlock(text='hi'),)),)
    >>> render_item(ContextItem("s", "assistant", state="summary", rendered="we met"))[0].blocks
    (TextBlock(text='[Summary] we met'),)
    """
    if item.state is State.SUMMARIZED:
        return ()
    if item.state is State.SUMMARY:
        return (Message("assistant", (TextBlock(SUMMARY_PREFIX + item.rendered),)),)
    if item.role is Role.TOOL:
        if item.tool_call_id and item.tool_name:
            return (
                Message(
                    "assistant", (ToolUseBlock(item.tool_call_id, item.tool_name, item.arguments),)
                ),
                Message(
                    "tool", (ToolResultBlock(item.tool_call_id, item.rendered, item.is_error),)
                ),
            )
        label = f"[tool {item.tool_name or 'unknown'}({item.arguments})]"
        return (Message("user", (TextBlock(f"{label} {item.rendered}".rstrip()),)),)
    blocks: tuple[Block, ...] = thinking_blocks(item.thinking) if item.thinking else ()
    if item.rendered:
        blocks = (*blocks, TextBlock(item.rendered))
    # Providers reject empty text blocks; an assistant turn that only called tools says nothing.
    return (Message(item.role.value, blocks),) if blocks else ()


#: The node metadata key under which an assistant reply keeps its reasoning blocks (a list).
THINKING_KEY = "thinking_blocks"
#: The reasoning block types sent back as they came.
THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})


def thinking_blocks(text: str) -> tuple[ThinkingBlock, ...]:
    """The reasoning blocks of an item's ``thinking`` (canonical JSON); a malformed one is none.

    >>> thinking_blocks('[{"signature":"s1","thinking":"Read it first.","type":"thinking"}]')[0].text
    'Read it first.'
    """
    try:
        found = json.loads(text)
    except ValueError:
        return ()
    blocks = found if isinstance(found, list) else ()
    return tuple(
        ThinkingBlock(canonical_json(block), _held(block))
        for block in blocks
        if isinstance(block, dict) and block.get("type") in THINKING_TYPES
    )


def reasoning_blocks(blocks: object) -> list[dict[str, object]]:
    """The ``thinking``/``redacted_thinking`` blocks among ``blocks`` (a content list), as they came.

    >>> reasoning_blocks([{"type": "thinking", "thinking": "Hm.", "signature": "s"}, {"type": "text"}])
    [{'type': 'thinking', 'thinking': 'Hm.', 'signature': 's'}]
    >>> reasoning_blocks("no blocks")
    []
    """
    if not isinstance(blocks, list | tuple):
        return []
    return [dict(b) for b in blocks if isinstance(b, dict) and b.get("type") in THINKING_TYPES]


def thinking_json(blocks: object) -> str:
    """The reasoning blocks among ``blocks`` (`reasoning_blocks`) as an item keeps them.

    >>> thinking_json([{"type": "thinking", "thinking": "Hm.", "signature": "s"}, {"type": "text"}])
    '[{"signature":"s","thinking":"Hm.","type":"thinking"}]'
    >>> thinking_json("no blocks")
    ''
    """
    kept = reasoning_blocks(blocks)
    return canonical_json(kept) if kept else ""


def shown_text(item: ContextItem) -> str:
    """The item's text as a listing shows it: led by a note of its reasoning blocks, if any.

    >>> shown_text(ContextItem("a", "assistant", rendered="Reading.",
    ...     thinking='[{"signature":"s","thinking":"Read a.py first.","type":"thinking"}]'))
    '[thinking: 16 chars] Reading.'
    """
    if not item.thinking:
        return item.rendered
    held = sum(len(block.text) for block in thinking_blocks(item.thinking))
    return f"[thinking: {held:,} chars] {item.rendered}".rstrip()


def _held(block: dict[str, object]) -> str:
    """What a reasoning block holds: a thinking block's text, a redacted one's data."""
    held = block.get("thinking") if block.get("type") == "thinking" else block.get("data")
    return held if isinstance(held, str) else ""


def item_tokens(item: ContextItem, tokenizer: Tokenizer) -> int:
    """Tokens the item contributes to the rendered request, by the one ruler."""
    return count_messages(render_item(item), tokenizer)


def counted(item: ContextItem, tokenizer: Tokenizer) -> ContextItem:
    """The item with ``tokens`` set from its rendering; call once per new or changed item."""
    messages = render_item(item)
    result = attrs.evolve(item, tokens=count_messages(messages, tokenizer))
    # The token count does not change the rendering: keep it, so the item renders once.
    result.remember(MESSAGES_KEY, messages)
    return result
