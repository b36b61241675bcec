"""Walking a commit's items from a rule's mark, counting each visit."""

from __future__ import annotations

from collections.abc import Iterator

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.commit.layout import Spans, visible_ranges
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
    ranges = visible_ranges(past, len(commit.items), start)
    for index, item in commit.items.positioned(ranges):
        if meter is not None:
            meter.items_visited += 1
        yield index, item
