"""The tool call ids a request may still show: a reply reusing one gets a fresh id (`ctxrules.dag.call_ids`)."""

from __future__ import annotations

from collections.abc import Iterator

from ctxrules.commit import ContextCommit
from ctxrules.commit.layout import visible_ranges


def visible_call_ids(commit: ContextCommit) -> Iterator[str]:
    """The tool call ids of the items ``commit`` sends (summarized ones are never sent)."""
    items = commit.items
    for positions in visible_ranges(commit.hidden or (), len(items)):
        for index in positions:
            call_id = items[index].tool_call_id
            if call_id:
                yield call_id
