"""Invariants 5, 6 and 12 on a session's commits one after another, each costing what changed.

The three read only a commit's notable items: its summaries, attached copies and their
markers. Looked for in every item of every commit, a session's check grew with the square
of its length (at 10,000 messages, a quarter of `ctxrules verify`'s profile). A
commit shares all but a few chunks with the one before it (the same objects), so each
chunk's notable items are found once and kept with it, and a commit reads only the
chunks from the first position where it differs from the last one checked. The answers
are those of `one_summary`, `attached_once` and `summary_items_outside`.
"""

from __future__ import annotations

import attrs

from ctxrules.check.attach import attached_once_of
from ctxrules.check.compaction import is_summary, summary_items_outside
from ctxrules.check.invariants import one_summary_of
from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.commit.attach import is_marker
from ctxrules.commit.vector import CHUNK, EMPTY_ITEMS, ItemVector
from ctxrules.dag import Graph

#: The key under which a chunk keeps its notable items (a pure function of its items).
_MEMO = "check.notable"


def notable(item: ContextItem) -> bool:
    """Whether invariants 5, 6 or 12 read the item: a summary, an attached copy or a marker."""
    return item.attached_from is not None or is_marker(item) or is_summary(item)


@attrs.define
class NotableChecks:
    """The last commit checked, and the notable items of its chunks in order.

    ``read`` counts the items looked at, for tests that bound the work.
    """

    graph: Graph
    items: ItemVector = EMPTY_ITEMS
    #: The notable items of every chunk of ``items``, in order.
    found: list[ContextItem] = attrs.Factory(list)
    #: ``ends[k]``: how many of ``found`` lie in chunks before chunk ``k + 1``.
    ends: list[int] = attrs.Factory(list)
    read: int = 0

    def check(self, commit: ContextCommit) -> list[Violation]:
        """Invariants 12 and 6 on ``commit``: what `one_summary` and `attached_once` find."""
        items = self._notable(commit.items)
        return one_summary_of(items) + attached_once_of(items, commit.attached)

    def outside(self) -> list[Violation]:
        """Invariant 5 on the items of the commit checked last: `summary_items_outside`."""
        return summary_items_outside(self.found, self.graph)

    def _notable(self, items: ItemVector) -> list[ContextItem]:
        first = self.items.first_difference(items)
        kept = len(self.ends) if first is None else min(first // CHUNK, len(self.ends))
        del self.ends[kept:]
        del self.found[self.ends[-1] if self.ends else 0 :]
        for chunk, _, _ in items.runs(kept * CHUNK, len(items)):
            memo = chunk.memo.get(_MEMO)
            if memo is None:
                self.read += len(chunk)
                memo = chunk.memo[_MEMO] = tuple(i for i in chunk if notable(i))
            self.found.extend(memo)  # type: ignore[arg-type]
            self.ends.append(len(self.found))
        self.items = items
        return self.found
