"""Rendering: commits to provider-neutral messages, and adapters to provider formats."""

from ctxrules.render.anthropic import AnthropicRequest, to_anthropic
from ctxrules.render.item import SUMMARY_PREFIX, counted, item_tokens, render_item
from ctxrules.render.messages import (
    Block,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    block_tokens,
    count_messages,
)
from ctxrules.render.openai import to_openai
from ctxrules.render.pairing import degrade_orphans
from ctxrules.render.render import pinned_messages, render_commit

__all__ = [
    "SUMMARY_PREFIX",
    "AnthropicRequest",
    "Block",
    "Message",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "block_tokens",
    "count_messages",
    "counted",
    "degrade_orphans",
    "item_tokens",
    "pinned_messages",
    "render_commit",
    "render_item",
    "to_anthropic",
    "to_openai",
]
