"""`scan` as it was before rules stepped over summarized spans: the reference the walks are checked against."""

from __future__ import annotations

from collections.abc import Iterator

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.rules import Facts
from ctxrules.rules.scan import scan


def reading_every_item(
    commit: ContextCommit,
    start: int,
    facts: Facts,
    *,
    past: object = (),  # noqa: ARG001 - what it ignores
) -> Iterator[tuple[int, ContextItem]]:
    """`scan` reading every item: the spans to step over ignored."""
    return scan(commit, start, facts)
