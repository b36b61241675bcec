"""`render_commit`: a commit becomes provider-neutral messages, purely."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Self

from ctxrules.commit.commit import ContextCommit
from ctxrules.commit.item import ContextItem
from ctxrules.commit.layout import visible_ranges
from ctxrules.commit.vector import Chunk, ItemVector
from ctxrules.render.item import MESSAGES_KEY, render_item
from ctxrules.render.messages import Message


# A tuple subclass cannot have non-empty slots: ``items`` lives in the instance dict.
class RenderedMessages(tuple[Message, ...]):  # noqa: SLOT001
    """The messages of a commit, and the visible items they come from, in order.

    It is a tuple of `Message` s like any other, and compares equal to one; the adapters
    use ``items`` to convert each item once, when it is new or changed. A slice or any
    other tuple is converted message by message.
    """

    items: tuple[ContextItem, ...]

    def __new__(  # noqa: D102 - the class says it
        cls, messages: Iterable[Message] = (), items: Iterable[ContextItem] = ()
    ) -> Self:
        self = super().__new__(cls, messages)
        self.items = tuple(items)
        return self

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
    turn costs what is new plus the copy of what is sent.
    """
    items = commit.items
    visible: list[ContextItem] = []
    messages: list[Message] = []
    for span in visible_ranges(commit.hidden or (), len(items)):
        if not isinstance(items, ItemVector):
            _extend(messages, visible, items[span.start : span.stop])
            continue
        for chunk, low, high in items.runs(span.start, span.stop):
            if low == 0 and high == len(chunk):
                # A whole chunk: its messages were joined once, when it was first sent.
                messages.extend(_chunk_messages(chunk))
                visible.extend(chunk)
            else:
                _extend(messages, visible, chunk[low:high])
    return RenderedMessages(messages, visible)


def _extend(
    messages: list[Message], visible: list[ContextItem], items: Iterable[ContextItem]
) -> None:
    for item in items:
        visible.append(item)
        memo = item.memo
        rendered = memo.get(MESSAGES_KEY) if memo is not None else None
        messages.extend(item_messages(item) if rendered is None else rendered)  # type: ignore[arg-type]


def _chunk_messages(chunk: Chunk) -> tuple[Message, ...]:
    """The messages of every item of a chunk, joined once and kept with the chunk."""
    memo = chunk.memo
    joined = memo.get(MESSAGES_KEY)
    if joined is None:
        joined = tuple(message for item in chunk for message in item_messages(item))
        memo[MESSAGES_KEY] = joined
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
