"""The neutral message form that `render_commit` produces and the adapters translate."""

from __future__ import annotations

import attrs

from ctxrules.tokens import Tokenizer


@attrs.frozen
class TextBlock:
    """Plain text."""

    text: str


@attrs.frozen
class ToolUseBlock:
    """An assistant's call of a tool; ``arguments`` is the (possibly cut) JSON text."""

    id: str
    name: str
    arguments: str


@attrs.frozen
class ToolResultBlock:
    """The result of the tool call ``tool_use_id``; ``is_error`` when the call failed."""

    tool_use_id: str
    text: str
    is_error: bool = False


@attrs.frozen
class ThinkingBlock:
    """A reasoning block the provider returned, kept verbatim: ``raw`` is its canonical JSON.

    Anthropic checks a ``thinking`` block's signature and wants the blocks back, unchanged
    and first, in the assistant message of a tool loop; other providers are sent none.
    ``text`` is what it holds (the thinking, or a ``redacted_thinking`` block's data).
    """

    raw: str
    text: str


Block = TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock


@attrs.frozen
class Message:
    """One provider-neutral message: ``role`` is system, user, assistant or tool.

    A ``tool`` message holds only `ToolResultBlock` s; its call is in the assistant
    message just before it.
    """

    role: str
    blocks: tuple[Block, ...]


def block_tokens(block: Block, tokenizer: Tokenizer) -> int:
    """Tokens of one block: the text, or a tool call's name plus arguments.

    A reasoning block counts its text: Anthropic counts it while its tool loop runs (and,
    for newer models, after); counting it always keeps the request within the window.
    """
    if isinstance(block, TextBlock):
        return tokenizer.count(block.text)
    if isinstance(block, ToolUseBlock):
        return tokenizer.count(block.name) + tokenizer.count(block.arguments)
    return tokenizer.count(block.text)


def count_messages(messages: tuple[Message, ...], tokenizer: Tokenizer) -> int:
    """The one ruler: each message's declared overhead plus the tokens of its blocks.

    >>> from ctxrules.tokens import HeuristicCounter
    >>> count_messages((Message("user", (TextBlock("hello world"),)),), HeuristicCounter())
    7
    """
    return sum(
        tokenizer.message_overhead + sum(block_tokens(block, tokenizer) for block in message.blocks)
        for message in messages
    )
