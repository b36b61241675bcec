"""`render_commit`: a commit becomes provider-neutral messages, purely."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Self

from ctxrules.commit.commit import ContextCommit
from ctxrules.commit.item import ContextItem
from ctxrules.commit.layout import visible_ranges
from ctxrules.commit.vector import Chunk, ItemVector
from ctxrules.render.item import MESSAGES_KEY, render_item
from ctxrules.render.messages import Message

#: Where rendered messages come from: a container of items (a commit's chunk, or any tuple)
#: and the offsets ``low`` to ``high`` of the visible items used in it.
Span = tuple[tuple[ContextItem, ...], int, int]


# A tuple subclass cannot have non-empty slots: ``spans`` lives in the instance dict.
class RenderedMessages(tuple[Message, ...]):  # noqa: SLOT001
    """The messages of a commit, and the visible items they come from, in order.

    It is a tuple of `Message` s like any other, and compares equal to one; the adapters
    use ``spans`` (the commit's chunks, each with the part of it that is visible) to
    convert each chunk once, and ``items`` to convert each item once. A slice or any other
    tuple is converted message by message.
    """

    spans: tuple[Span, ...]

    def __new__(  # noqa: D102 - the class says it
        cls,
        messages: Iterable[Message] = (),
        items: Iterable[ContextItem] = (),
        *,
        spans: tuple[Span, ...] | None = None,
    ) -> Self:
        self = super().__new__(cls, messages)
        if spans is None:
            flat = tuple(items)
            spans = ((flat, 0, len(flat)),) if flat else ()
        self.spans = spans
        return self

    @property
    def items(self) -> tuple[ContextItem, ...]:
        """The visible items, in order (gathered from the spans when first asked for)."""
        found: tuple[ContextItem, ...] | None = self.__dict__.get("_items")
        if found is None:
            found = tuple(chain.from_iterable(part[low:high] for part, low, high in self.spans))
            self.__dict__["_items"] = found
        return found

    def __getnewargs__(self) -> tuple[tuple[Message, ...], tuple[ContextItem, ...]]:
        return tuple(self), self.items


def item_messages(item: ContextItem) -> tuple[Message, ...]:
    """`render_item` of the item, computed once per item and kept with it."""
    memo = item.memo
    messages = memo.get(MESSAGES_KEY) if memo is not None else None
    if messages is None:
        messages = render_item(item)
        item.remember(MESSAGES_KEY, messages)
    return messages  # type: ignore[return-value]


def render_commit(commit: ContextCommit) -> RenderedMessages:
    """The messages the model reads for this commit: each item's messages, in order.

    Pure: no clock, no I/O, no globals; equal commits give equal messages. It visits the
    visible items only (summarized spans are stepped over), and renders an item once: a
    turn costs what is new plus one copy of the messages sent (the items are named by
    their chunks, not copied).
    """
    items = commit.items
    spans: list[Span] = []
    for visible in visible_ranges(commit.hidden or (), len(items)):
        if isinstance(items, ItemVector):
            spans.extend(items.runs(visible.start, visible.stop))
        else:
            part = tuple(items[visible.start : visible.stop])
            spans.append((part, 0, len(part)))
    # A list extended by whole tuples, then copied once: a chained generator costs a Python
    # step per message, and a turn's request holds thousands of them.
    messages: list[Message] = []
    for part, low, high in spans:
        messages.extend(span_messages(part, low, high))
    return RenderedMessages(messages, spans=tuple(spans))


def span_messages(part: tuple[ContextItem, ...], low: int, high: int) -> tuple[Message, ...]:
    """The messages of ``part[low:high]``, joined once and kept with a chunk."""
    if not isinstance(part, Chunk):
        return tuple(message for item in part[low:high] for message in item_messages(item))
    key = MESSAGES_KEY if low == 0 and high == len(part) else f"{MESSAGES_KEY}@{low}:{high}"
    memo = part.memo
    joined = memo.get(key)
    if joined is None:
        joined = tuple(message for item in part[low:high] for message in item_messages(item))
        memo[key] = joined
    return joined  # type: ignore[return-value]


def pinned_messages(messages: Sequence[Message]) -> frozenset[int]:
    """Indexes of the messages that pinned items render to (invariant 17); none for a plain tuple.

    >>> from ctxrules.commit import ContextCommit, ContextItem
    >>> c = ContextCommit("s").append_items([ContextItem("a", "user", rendered="hi"),
    ...     ContextItem("b", "user", rendered="never push to main").pin()])
    >>> sorted(pinned_messages(render_commit(c)))
    [1]
    """
    if not isinstance(messages, RenderedMessages):
        return frozenset()
    found: set[int] = set()
    at = 0
    for item in messages.items:
        count = len(item_messages(item))
        if item.pinned:
            found.update(range(at, at + count))
        at += count
    return frozenset(found)
