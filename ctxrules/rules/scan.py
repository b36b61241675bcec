"""Walking a commit's items from a rule's mark, counting each visit."""

from __future__ import annotations

from collections.abc import Iterator

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.commit.layout import Spans
from ctxrules.rules.facts import Facts


def scan(
    commit: ContextCommit, start: int, facts: Facts, *, past: Spans = ()
) -> Iterator[tuple[int, ContextItem]]:
    """Items from ``start`` on, with their positions; each one yielded counts as visited.

    A rule stops early (``break``) as soon as nothing further can change, so the work of a
    turn is the number of items actually yielded. ``past`` names spans (sorted, apart) the
    walk steps over unread: a rule passes the commit's summarized spans where it has
    nothing to do with a summarized item, which a resumed session would otherwise read
    from the store chunk by chunk.
    """
    meter = facts.meter
    for low, high in _between(start, len(commit.items), past):
        index = low
        # Chunk by chunk: indexing the vector item by item looked up the chunk for each one.
        for chunk, first, last in commit.items.runs(low, high):
            for item in chunk[first:last]:
                if meter is not None:
                    meter.items_visited += 1
                yield index, item
                index += 1


def _between(start: int, stop: int, past: Spans) -> Iterator[tuple[int, int]]:
    """The runs of positions from ``start`` to ``stop`` outside the spans of ``past``.

    >>> list(_between(0, 10, ((2, 4), (6, 7)))), list(_between(3, 10, ((0, 5),)))
    ([(0, 2), (4, 6), (7, 10)], [(5, 10)])
    """
    at = start
    for low, high in past:
        if high <= at:
            continue
        if low >= stop:
            break
        if low > at:
            yield at, low
        at = max(at, high)
    if at < stop:
        yield at, stop
