"""The items a rule did not leave as it found them: what a law comparing item by item reads.

A rule returns most of its input's items as the very objects it was given (a commit's
methods share them, and whole chunks of the item vector with them). A law whose verdict on
a position depends on the old and new item there alone cannot fail where the two are one
object, so it reads only the positions yielded here.
"""

from __future__ import annotations

from collections.abc import Iterator

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.commit.vector import CHUNK


def differing_pairs(
    before: ContextCommit, after: ContextCommit
) -> Iterator[tuple[int, ContextItem, ContextItem]]:
    """Each position whose item in ``after`` is not the object ``before`` holds there, in order.

    For commits of equal length only (nothing is yielded otherwise). A chunk both vectors
    share is passed over whole: every item in it is the same object at the same place.

    >>> from ctxrules.commit import ContextItem
    >>> before = ContextCommit("s").append_items(ContextItem(f"n{i}", "user") for i in range(200))
    >>> after = before.replace_items({130: ContextItem("n130", "user", tokens=1)})
    >>> [(i, old.tokens, new.tokens) for i, old, new in differing_pairs(before, after)]
    [(130, 0, 1)]
    """
    if len(before.items) != len(after.items):
        return
    for number, (old_chunk, new_chunk) in enumerate(
        zip(before.items.chunks(), after.items.chunks(), strict=True)
    ):
        if old_chunk is new_chunk:
            continue
        for offset, (old, new) in enumerate(zip(old_chunk, new_chunk, strict=True)):
            if old is not new:
                yield number * CHUNK + offset, old, new
