"""Where to put cache breakpoints: the stable part of the request and its newest message."""

from __future__ import annotations

from collections.abc import Sequence

from ctxrules.render import Message


def stable_prefix_end(previous: Sequence[Message], current: Sequence[Message]) -> int | None:
    """Index of the last message ``current`` shares with ``previous``, or None if none.

    Between batch points this is the whole previous request, which the provider has
    cached; at a batch point it is the message before the first rewritten one, the
    longest prefix still readable. Pass it to ``to_anthropic(cache_prefix_end=...)``.

    >>> from ctxrules.render import TextBlock
    >>> a, b, c = (Message("user", (TextBlock(t),)) for t in "abc")
    >>> stable_prefix_end((a, b), (a, b, c)), stable_prefix_end((b,), (a, c)), stable_prefix_end((), (a,))
    (1, None, None)
    """
    shared = 0
    for old, new in zip(previous, current, strict=False):
        if old != new:
            break
        shared += 1
    return shared - 1 if shared else None
