"""How one item renders: the single definition both rendering and token counting use."""

from __future__ import annotations

import attrs

from ctxrules.commit.item import ContextItem
from ctxrules.commit.state import State
from ctxrules.dag import Role
from ctxrules.render.messages import (
    Message,
    TextBlock,
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
                Message("tool", (ToolResultBlock(item.tool_call_id, item.rendered),)),
            )
        label = f"[tool {item.tool_name or 'unknown'}({item.arguments})]"
        return (Message("user", (TextBlock(f"{label} {item.rendered}".rstrip()),)),)
    if not item.rendered:
        # Providers reject empty text blocks; an assistant turn that only called tools says nothing.
        return ()
    return (Message(item.role.value, (TextBlock(item.rendered),)),)


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
