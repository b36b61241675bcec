"""Where a commit's summarized items lie, kept as spans so rendering can step over them."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator

from ctxrules.commit.item import ContextItem
from ctxrules.commit.state import State

#: Half-open ``(start, end)`` position ranges, ascending and disjoint, never adjacent.
Spans = tuple[tuple[int, int], ...]


def summarized_spans(items: Iterable[ContextItem]) -> Spans:
    """The maximal runs of summarized items, built from scratch (O(n)).

    >>> states = ["full", "full", "summarized", "summarized", "aged", "summarized"]
    >>> summarized_spans(ContextItem(str(i), "user", state=s) for i, s in enumerate(states))
    ((2, 4), (5, 6))
    """
    spans: list[tuple[int, int]] = []
    for index, item in enumerate(items):
        if item.state is State.SUMMARIZED:
            if spans and spans[-1][1] == index:
                spans[-1] = (spans[-1][0], index + 1)
            else:
                spans.append((index, index + 1))
    return tuple(spans)


def with_position(spans: Spans, position: int, *, hidden: bool) -> Spans:
    """The spans with ``position`` added (``hidden``) or removed; O(number of spans).

    >>> with_position(((2, 4),), 4, hidden=True), with_position(((2, 5),), 3, hidden=False)
    (((2, 5),), ((2, 3), (4, 5)))
    """
    at = bisect_right(spans, (position, float("inf")))  # spans starting at or before position
    before = spans[at - 1] if at else None
    inside = before is not None and before[0] <= position < before[1]
    if hidden == inside:
        return spans
    if not hidden:
        assert before is not None  # noqa: S101 - inside implies a span before
        pieces = [(before[0], position), (position + 1, before[1])]
        return (*spans[: at - 1], *(p for p in pieces if p[0] < p[1]), *spans[at:])
    start, end = position, position + 1
    lo, hi = at, at
    if before is not None and before[1] == position:
        start, lo = before[0], at - 1
    if at < len(spans) and spans[at][0] == end:
        end, hi = spans[at][1], at + 1
    return (*spans[:lo], (start, end), *spans[hi:])


def covered(spans: Spans, start: int, end: int) -> bool:
    """Whether every position from ``start`` to ``end`` (half-open) lies in a span.

    >>> covered(((2, 6),), 3, 6), covered(((2, 4), (5, 6)), 2, 6), covered((), 3, 3)
    (True, False, True)
    """
    if start >= end:
        return True
    at = bisect_right(spans, (start, float("inf")))
    return at > 0 and spans[at - 1][0] <= start and spans[at - 1][1] >= end


def visible_ranges(spans: Spans, length: int, start: int = 0) -> Iterator[range]:
    """The position ranges from ``start`` that no span covers, in order.

    >>> [tuple(r) for r in visible_ranges(((1, 3), (4, 5)), 6)]
    [(0,), (3,), (5,)]
    """
    cursor = start
    for span_start, span_end in spans:
        if span_end <= cursor:
            continue
        if span_start > cursor:
            yield range(cursor, span_start)
        cursor = max(cursor, span_end)
    if cursor < length:
        yield range(cursor, length)
