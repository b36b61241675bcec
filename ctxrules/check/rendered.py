"""Invariants 10 and 11 on a session's requests turn by turn, each request costing what changed.

`ctxrules.check.recorded.verify_graph` checks the request the pipeline builds at every
turn. Checked whole, each request counts and scans every message again: a session's
check grew with the square of its length (2,000 messages: 11 s; 10,000: 13 minutes).
A request is rendered from the chunk where its commit first differs from the one before
(`RequestRenderer`): the messages before are the very objects rendered then, and their
counts and the protocol violations they hold are kept; only the messages from there are
read. The answers are those of `one_ruler` and `protocol_valid` on the whole request, in
the same order.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ctxrules.check.invariants import call_violations, result_violations, ruler_violations
from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit
from ctxrules.commit.layout import visible_ranges
from ctxrules.commit.vector import CHUNK, EMPTY_ITEMS, ItemVector
from ctxrules.render import Message, count_messages
from ctxrules.render.render import span_messages
from ctxrules.tokens import Tokenizer

#: A violation and the index of the message whose check found it.
_Found = tuple[int, Violation]


@attrs.define
class RequestRenderer:
    """The messages of a session's commits one after another, each rendered from where it differs.

    `render_commit` reads every chunk of a commit for its kept messages (about 800 at
    100,000 messages), which made a session's check grow with the turns times the chunks. A commit
    shares every chunk before the first position where it differs from the one before (the
    same objects, with the same summarized spans before it), so their messages stand: only
    the chunks from that position are read again. ``read`` counts the chunks read.
    """

    items: ItemVector = EMPTY_ITEMS
    messages: list[Message] = attrs.Factory(list)
    #: ``starts[k]``: the index of the first message of chunk ``k`` (where it would be, if
    #: the chunk shows nothing), up to the last chunk that shows something.
    starts: list[int] = attrs.Factory(list)
    read: int = 0

    def render(self, commit: ContextCommit) -> tuple[list[Message], int]:
        """The messages of ``commit`` (`render_commit`'s, in a list kept for the next commit), and how many lead unchanged.

        The messages said unchanged are the very objects of the last commit's request.
        """
        items = commit.items
        first = self.items.first_difference(items)
        kept = len(self.starts) if first is None else min(first // CHUNK, len(self.starts))
        same = self.starts[kept] if kept < len(self.starts) else len(self.messages)
        before = self.messages[same:]
        del self.messages[same:]
        del self.starts[kept:]
        for visible in visible_ranges(commit.hidden or (), len(items), kept * CHUNK):
            at = visible.start
            for chunk, low, high in items.runs(visible.start, visible.stop):
                number = at // CHUNK
                while len(self.starts) <= number:
                    self.starts.append(len(self.messages))
                self.messages.extend(span_messages(chunk, low, high))
                self.read += 1
                at += high - low
        self.items = items
        # The chunk read again starts with the items it kept: their messages are the very
        # objects of before, so they are not read again either.
        start, messages = same, self.messages
        while (
            same < len(messages)
            and same - start < len(before)
            and messages[same] is before[same - start]
        ):
            same += 1
        return messages, same


@attrs.define
class RenderedChecks:
    """The last request checked: its messages, their running counts and what they broke.

    ``read`` counts the messages counted or scanned, for tests that bound the work.
    """

    tokenizer: Tokenizer
    requests: RequestRenderer = attrs.Factory(RequestRenderer)
    #: ``totals[i]``: the count of the first ``i`` messages.
    totals: list[int] = attrs.field(factory=lambda: [0])
    results: list[_Found] = attrs.field(factory=list)
    uses: list[_Found] = attrs.field(factory=list)
    #: Each call id of the request, and the index of the first message that holds it.
    first_use: dict[str, int] = attrs.field(factory=dict)
    read: int = 0

    def check(self, commit: ContextCommit) -> list[Violation]:
        """`one_ruler` of ``commit`` and `protocol_valid` of its rendering, read from where it differs."""
        return self.check_from(commit, *self.requests.render(commit))

    def check_from(
        self, commit: ContextCommit, messages: Sequence[Message], same: int
    ) -> list[Violation]:
        """`one_ruler` of ``commit`` and `protocol_valid` of ``messages``, whose first ``same`` are the last request's."""
        return self._ruler(commit, messages, same) + self._protocol(messages, same)

    def _ruler(
        self, commit: ContextCommit, messages: Sequence[Message], same: int
    ) -> list[Violation]:
        del self.totals[same + 1 :]
        for message in messages[same:]:
            self.totals.append(self.totals[-1] + count_messages((message,), self.tokenizer))
        self.read += len(messages) - same
        return ruler_violations(commit, self.totals[-1])

    def _protocol(self, messages: Sequence[Message], same: int) -> list[Violation]:
        # A result's check reads the message before it; a call's, the one after it and the
        # ids before it: those of the shared messages but the last stand.
        results_from, uses_from = same, max(same - 1, 0)
        self.results = [(i, v) for i, v in self.results if i < results_from]
        self.uses = [(i, v) for i, v in self.uses if i < uses_from]
        for index in range(results_from, len(messages)):
            self.results.extend((index, v) for v in result_violations(messages, index))
        first = self.first_use
        # Ids in order of first use: those first used from ``uses_from`` on are the last ones.
        while first and next(reversed(first.values())) >= uses_from:
            first.popitem()
        for index in range(uses_from, len(messages)):
            uses, found = call_violations(messages, index, first)
            self.uses.extend((index, v) for v in found)
            for call in uses:
                first.setdefault(call, index)
        self.read += len(messages) - min(results_from, uses_from)
        return [v for _, v in self.results] + [v for _, v in self.uses]
