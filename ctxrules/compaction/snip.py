"""Snip: trim the outgoing request to fit, never the commit (reference 002 §02)."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ctxrules.render import (
    SUMMARY_PREFIX,
    Block,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    block_tokens,
)
from ctxrules.rules.text import head_and_tail
from ctxrules.tokens import Tokenizer

#: What replaces the middle of a text that snip shortened.
SNIP_MARKER = "\n…[snipped]…\n"


@attrs.frozen
class Snipped:
    """The messages to send, their tokens, and what was cut to get there."""

    messages: tuple[Message, ...]
    tokens: int
    limit: int
    dropped: int = 0
    shortened: int = 0

    @property
    def fits(self) -> bool:
        """Whether the messages are within ``limit``."""
        return self.tokens <= self.limit


def _units(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """``(start, end)`` runs dropped together: a message plus the tool results after it.

    A reply that begins with reasoning blocks also holds the tool calls it made (and their
    results): Anthropic refuses a tool loop whose calls come without their reasoning.
    """
    starts: list[int] = []
    reasoned = False  # whether the messages since the last start continue a reasoning reply
    for i, message in enumerate(messages):
        calls = message.role == "assistant" and all(
            isinstance(b, ToolUseBlock) for b in message.blocks
        )
        if i and (message.role == "tool" or (calls and reasoned)):
            continue
        starts.append(i)
        blocks = message.blocks
        reasoned = (
            message.role == "assistant" and bool(blocks) and isinstance(blocks[0], ThinkingBlock)
        )
    return list(zip(starts, [*starts[1:], len(messages)], strict=True))


def _pinned(
    messages: Sequence[Message], units: list[tuple[int, int]], keep: frozenset[int]
) -> set[int]:
    """Units never dropped: system text, the summary, pinned items, the last user message and unit."""

    def is_summary(m: Message) -> bool:
        return any(isinstance(b, TextBlock) and b.text.startswith(SUMMARY_PREFIX) for b in m.blocks)

    pinned = {
        u
        for u, (start, end) in enumerate(units)
        if messages[start].role == "system"
        or is_summary(messages[start])
        or any(i in keep for i in range(start, end))
    }
    users = [u for u, (start, _) in enumerate(units) if messages[start].role == "user"]
    return pinned | set(users[-1:]) | ({len(units) - 1} if units else set())


#: Characters a token of the cut may span, at least, as far as the cut's length goes.
CHARS_PER_TOKEN = 8


def _shorten(block: Block, size: int, target: int, tokenizer: Tokenizer) -> Block | None:
    """The block (of ``size`` tokens) cut to at most ``target`` tokens, head and tail kept; None if it cannot shrink."""
    if isinstance(block, ThinkingBlock):
        return None  # signed by the provider: sent whole or not at all
    text = block.arguments if isinstance(block, ToolUseBlock) else block.text
    fixed = tokenizer.count(block.name) if isinstance(block, ToolUseBlock) else 0

    def cut(keep: int) -> str:
        return head_and_tail(text, keep - keep // 3, keep // 3, SNIP_MARKER)

    # The longest cut tried spans twice the text's own characters per token (at least
    # CHARS_PER_TOKEN), so a huge text is not counted whole again at each step.
    spans = max(CHARS_PER_TOKEN, -(-2 * len(text) // max(size, 1)))
    low, high = 0, min(len(text) - 1, (target + 1) * spans)
    if len(text) == 0 or tokenizer.count(cut(0)) + fixed >= size:
        return None
    while low < high:  # the longest cut that fits the target, by bisection
        mid = (low + high + 1) // 2
        if tokenizer.count(cut(mid)) + fixed <= target:
            low = mid
        else:
            high = mid - 1
    new = cut(low)
    if isinstance(block, ToolUseBlock):
        return attrs.evolve(block, arguments=new)
    return attrs.evolve(block, text=new)


def _shorten_until(
    messages: list[Message],
    block_sizes: list[list[int]],
    limit: int,
    total: int,
    tokenizer: Tokenizer,
    *,
    whole: frozenset[int] = frozenset(),
) -> tuple[int, int]:
    """Shorten the largest blocks until the total fits; returns (total, shortened).

    System text and the messages at ``whole`` (pinned items) are never shortened.
    """
    shortened = 0
    # Each block was counted once, by the caller: a huge text is not tokenized on every pass.
    sizes = [
        (block_sizes[i][b], i, b)
        for i, message in enumerate(messages)
        if message.role != "system" and i not in whole
        for b in range(len(message.blocks))
    ]
    sizes.sort()
    while total > limit and sizes:
        size, i, b = sizes.pop()
        smaller = _shorten(messages[i].blocks[b], size, max(size - (total - limit), 0), tokenizer)
        if smaller is None:
            continue
        blocks = list(messages[i].blocks)
        blocks[b] = smaller
        messages[i] = attrs.evolve(messages[i], blocks=tuple(blocks))
        total += block_tokens(smaller, tokenizer) - size
        shortened += 1
    return total, shortened


def snip(
    messages: Sequence[Message],
    limit: int,
    tokenizer: Tokenizer,
    *,
    keep_first: int = 3,
    keep: frozenset[int] = frozenset(),
) -> Snipped:
    """Drop whole units oldest first (the first ``keep_first`` last of all), then shorten blocks.

    Tool calls leave with their results, so no result is orphaned. System text, the
    summary, the messages at ``keep`` (pinned items: invariant 17), the last user message
    and the last unit are never dropped; system text and ``keep`` are never shortened. The
    commit the messages came from is not touched.

    >>> from ctxrules.tokens import HeuristicCounter
    >>> talk = [Message(r, (TextBlock(t * 40),)) for r, t in [("user", "a "), ("assistant", "b "), ("user", "c ")]]
    >>> out = snip(talk, 50, HeuristicCounter(), keep_first=0)
    >>> [m.role for m in out.messages], out.tokens, out.dropped
    (['user'], 26, 2)
    """
    block_sizes = [[block_tokens(b, tokenizer) for b in m.blocks] for m in messages]
    costs = [tokenizer.message_overhead + sum(sizes) for sizes in block_sizes]
    total = sum(costs)
    if total <= limit:
        return Snipped(tuple(messages), total, limit)
    units = _units(messages)
    pinned = _pinned(messages, units, keep)
    order = [u for u in [*range(keep_first, len(units)), *range(keep_first)] if u < len(units)]
    gone: set[int] = set()
    for u in order:
        if total <= limit:
            break
        if u not in pinned:
            start, end = units[u]
            total -= sum(costs[start:end])
            gone.add(u)
    kept_at = [
        i for u, (start, end) in enumerate(units) if u not in gone for i in range(start, end)
    ]
    kept = [messages[i] for i in kept_at]
    kept_sizes = [block_sizes[i] for i in kept_at]
    whole = frozenset(n for n, i in enumerate(kept_at) if i in keep)
    total, shortened = _shorten_until(kept, kept_sizes, limit, total, tokenizer, whole=whole)
    dropped = len(messages) - len(kept)
    return Snipped(tuple(kept), total, limit, dropped, shortened)
