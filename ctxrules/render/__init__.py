"""Rendering: commits to provider-neutral messages, and adapters to provider formats."""

from ctxrules.render.item import SUMMARY_PREFIX, counted, item_tokens, render_item
from ctxrules.render.messages import (
    Block,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    block_tokens,
    count_messages,
)
from ctxrules.render.render import render_commit

__all__ = [
    "SUMMARY_PREFIX",
    "Block",
    "Message",
    "TextBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "block_tokens",
    "count_messages",
    "counted",
    "item_tokens",
    "render_commit",
    "render_item",
]
