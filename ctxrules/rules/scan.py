"""Walking a commit's items from a rule's mark, counting each visit."""

from __future__ import annotations

from collections.abc import Iterator

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.rules.facts import Facts


def scan(commit: ContextCommit, start: int, facts: Facts) -> Iterator[tuple[int, ContextItem]]:
    """Items from ``start`` on, with their positions; each one yielded counts as visited.

    A rule stops early (``break``) as soon as nothing further can change, so the work of a
    turn is the number of items actually yielded.
    """
    meter = facts.meter
    index = start
    # Chunk by chunk: indexing the vector item by item looked up the chunk for each one.
    for chunk, low, high in commit.items.runs(start, len(commit.items)):
        for item in chunk[low:high]:
            if meter is not None:
                meter.items_visited += 1
            yield index, item
            index += 1
