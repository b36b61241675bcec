"""`render_commit`: a commit becomes provider-neutral messages, purely."""

from __future__ import annotations

from ctxrules.commit.commit import ContextCommit
from ctxrules.render.item import render_item
from ctxrules.render.messages import Message


def render_commit(commit: ContextCommit) -> tuple[Message, ...]:
    """The messages the model reads for this commit: each item's messages, in order.

    Pure: no clock, no I/O, no globals; equal commits give equal messages. The one O(n)
    step of a turn.
    """
    return tuple(message for item in commit.items for message in render_item(item))
