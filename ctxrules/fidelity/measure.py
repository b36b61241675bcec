"""Fidelity of one request: where each reference the model went on to use stood in it.

Each reference of the recorded reply that first came from a tool result is *visible*
(verbatim in the request's text), *one recall away* (a handle the request names recalls a
text that holds it), *deeper* (reachable by more than one recall: a handle listed by a fold
the request names, a summary folded into a later one; or by ``search_history`` when the
request offers it) or *lost*. The artifact trail is the files written so far, each of
which should be named in the request.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence

import attrs

from ctxrules.dag import Call, Graph
from ctxrules.fidelity.extract import references, references_read
from ctxrules.fidelity.index import HistoryIndex, reply_texts
from ctxrules.render import Message, ToolUseBlock
from ctxrules.rules.handles import handles_in

#: A handle no named handle leads to.
_UNREACHABLE = 1 << 30


class Reach(enum.StrEnum):
    """Where a reference stood in a request, from best to worst."""

    VISIBLE = "visible"
    ONE_RECALL = "one_recall"
    DEEPER = "deeper"
    LOST = "lost"


@attrs.frozen
class Hidden:
    """A reference not visible in the request: how far it was and the text that holds it."""

    reference: str
    reach: Reach
    source_id: str


@attrs.frozen
class Fidelity:
    """One request's fidelity: its references by reach, the recalls they need, the trail.

    ``round_trips`` counts the distinct handles the model would recall (plus one
    ``search_history`` per reference only a search finds) to see every reference again;
    ``trail`` the files written so far and ``trail_missing`` those the request never names.
    """

    references: int = 0
    visible: int = 0
    one_recall: int = 0
    deeper: int = 0
    lost: int = 0
    round_trips: int = 0
    trail: int = 0
    trail_missing: tuple[str, ...] = ()
    hidden: tuple[Hidden, ...] = ()

    @property
    def trail_named(self) -> bool:
        """Whether every file written so far is named in the request."""
        return not self.trail_missing

    def to_json(self) -> dict[str, object]:
        """The figures as plain JSON, hidden references included."""
        return {
            "references": self.references,
            "visible": self.visible,
            "one_recall": self.one_recall,
            "deeper": self.deeper,
            "lost": self.lost,
            "round_trips": self.round_trips,
            "trail": self.trail,
            "trail_missing": list(self.trail_missing),
            "hidden": [[h.reference, h.reach.value, h.source_id] for h in self.hidden],
        }


def message_text(message: Message) -> str:
    """The text one message sends: its texts, tool results and tool call arguments."""
    return "\n".join(
        block.arguments if isinstance(block, ToolUseBlock) else block.text
        for block in message.blocks
    )


def request_text(messages: Iterable[Message]) -> str:
    """Every text the request sends, message by message (`message_text`)."""
    return "\n".join(message_text(message) for message in messages)


@attrs.define(eq=False)
class _Searches:
    """Where each string searched for stood in a replay's requests so far (`SentText.contains`).

    ``seen`` maps a string to the first message holding it (-1 for none), the messages
    searched, and the generation (request) it was searched in; ``keeps[g]`` is how many
    leading messages request ``g`` shares with request ``g - 1``. ``searched`` counts the
    messages searched (work counted, for the test that guards it).
    """

    seen: dict[str, tuple[int, int, int]] = attrs.field(factory=dict)
    keeps: list[int] = attrs.field(factory=lambda: [0])
    searched: int = 0


@attrs.frozen
class SentText:
    """A request's text and the handles each of its messages names, message by message.

    The next request usually starts with the same messages (a pure extension): `grown`
    keeps their text and handles and reads only the messages that are new, and `contains`
    remembers where each string it was asked for stood, so a string is searched for in the
    messages that changed since it was last asked for, not in the whole request again.
    """

    texts: tuple[str, ...] = ()
    handles: tuple[frozenset[str], ...] = ()
    generation: int = attrs.field(default=0, eq=False)
    searches: _Searches = attrs.field(factory=_Searches, eq=False, repr=False)

    def grown(self, messages: Sequence[Message], shared: int) -> SentText:
        """The text of ``messages``, whose first ``shared`` are this request's first ones."""
        keep = min(shared, len(self.texts))
        texts, handles = list(self.texts[:keep]), list(self.handles[:keep])
        for message in messages[keep:]:
            text = message_text(message)
            texts.append(text)
            handles.append(frozenset(handles_in(text + "\n")))
        searches = self.searches
        if self.generation != len(searches.keeps) - 1:
            # Grown from an older version: what was searched since does not describe it.
            searches, keep = _Searches(), 0
        searches.keeps.append(keep)
        return SentText(tuple(texts), tuple(handles), len(searches.keeps) - 1, searches)

    @property
    def text(self) -> str:
        """The whole request's text, a newline after each message (`message_text`)."""
        return "".join(f"{text}\n" for text in self.texts)

    @property
    def named(self) -> frozenset[str]:
        """Every handle the request names."""
        return frozenset().union(*self.handles)

    def contains(self, string: str) -> bool:
        """Whether ``string`` is in the request's `text`, searching only what changed since asked."""
        if not string or "\n" in string:
            # Across messages, or empty: the whole text answers (no reference is either).
            return string in self.text
        searches = self.searches
        start = 0
        entry = searches.seen.get(string)
        # An entry from a later request says nothing of this one's differing messages.
        if entry is not None and entry[2] <= self.generation:
            at, upto, then = entry
            # The leading messages every request since then kept: the same texts as then.
            same = min(searches.keeps[then + 1 : self.generation + 1], default=len(self.texts))
            if 0 <= at < same:
                searches.seen[string] = (at, at + 1, self.generation)
                return True
            start = min(at if at >= 0 else upto, same)
        for position in range(start, len(self.texts)):
            searches.searched += 1
            if string in self.texts[position]:
                searches.seen[string] = (position, position + 1, self.generation)
                return True
        searches.seen[string] = (-1, len(self.texts), self.generation)
        return False


def reply_references(
    graph: Graph, call: Call, index: HistoryIndex | None = None
) -> tuple[str, ...]:
    """The references of what an assistant call wrote: its text and its tool calls' arguments.

    Given the replay's ``index``, the words are judged through its memo: a name judged for
    one reply, or for a region of the history, is not judged again.
    """
    texts = reply_texts(graph, call)
    if index is None:
        return tuple(dict.fromkeys(r for text in texts for r in references(text)))
    return tuple(dict.fromkeys(r for text in texts for r in references_read(text, index.memo)))


@attrs.define
class _Reacher:
    """Recall depth of handles from those a request names, memoised for one request."""

    named: frozenset[str]
    parents: dict[str, set[str]]
    depth: dict[str, tuple[int, str | None]] = attrs.field(factory=dict)

    def reach(self, handle: str) -> tuple[int, str | None]:
        """How many recalls reach ``handle`` (1 when named), and the handle recalled before it."""
        if handle in self.named:
            return 1, None
        known = self.depth.get(handle)
        if known is not None:
            return known
        # Marked first: a cycle of containers (there should be none) reads as unreachable.
        self.depth[handle] = (_UNREACHABLE, None)
        best: tuple[int, str | None] = (_UNREACHABLE, None)
        for parent in sorted(self.parents.get(handle, ())):
            steps, _ = self.reach(parent)
            if steps + 1 < best[0]:
                best = (steps + 1, parent)
        self.depth[handle] = best
        return best

    def path(self, handle: str) -> list[str]:
        """The handles recalled to read ``handle``, the one it is listed in first."""
        chain = [handle]
        while (before := self.reach(chain[-1])[1]) is not None:
            chain.append(before)
        return chain


def measure(
    index: HistoryIndex,
    found: Sequence[str],
    messages: Sequence[Message],
    *,
    search: bool = False,
    text: SentText | None = None,
) -> Fidelity:
    """The fidelity of one request (``messages``) for the references ``found`` in its reply.

    Only references whose first occurrence in ``index`` is a tool result count. ``search``
    says whether the request offers ``search_history`` (then nothing in the history is
    lost, only deeper). ``text`` is the messages' `SentText`, if already built.
    """
    sent_text = SentText().grown(messages, 0) if text is None else text
    reacher = _Reacher(sent_text.named, index.parents)
    counts = dict.fromkeys(Reach, 0)
    hidden: list[Hidden] = []
    # The handles each reference one recall away could be read from, for the cover below.
    direct: list[set[str]] = []
    recalled: set[str] = set()
    searches = 0
    kept = _from_tools(index, found)
    for reference, first in kept:
        if sent_text.contains(reference):
            counts[Reach.VISIBLE] += 1
            continue
        where = index.containing(reference)
        best: tuple[int, int] = (_UNREACHABLE, -1)
        handles: set[str] = set()
        for position in where:
            handle = index.sources[position].handle
            steps = reacher.reach(handle)[0]
            if steps == 1:
                handles.add(handle)
            if steps < best[0]:
                best = (steps, position)
        steps, position = best
        if steps == 1:
            reach = Reach.ONE_RECALL
            direct.append(handles)
        elif steps < _UNREACHABLE:
            reach = Reach.DEEPER
            recalled.update(reacher.path(index.sources[position].handle))
        elif search:
            reach, searches = Reach.DEEPER, searches + 1
        else:
            reach = Reach.LOST
        counts[reach] += 1
        hidden.append(Hidden(reference, reach, index.sources[first].source_id))
    missing = tuple(path for path in index.trail if not sent_text.contains(path))
    return Fidelity(
        references=len(kept),
        visible=counts[Reach.VISIBLE],
        one_recall=counts[Reach.ONE_RECALL],
        deeper=counts[Reach.DEEPER],
        lost=counts[Reach.LOST],
        round_trips=len(recalled | _cover(direct, recalled)) + searches,
        trail=len(index.trail),
        trail_missing=missing,
        hidden=tuple(hidden),
    )


def _from_tools(index: HistoryIndex, found: Sequence[str]) -> list[tuple[str, int]]:
    """The references whose first text is a tool result's, each with that text's position.

    Where a reference first stood decides whether it counts; its other texts matter only
    when it is not visible, so only then are they all looked for (`HistoryIndex.containing`).
    """
    kept: list[tuple[str, int]] = []
    for reference in found:
        first = index.first_source(reference)
        if first is not None and index.sources[first].kind == "tool":
            kept.append((reference, first))
    return kept


def _cover(options: list[set[str]], already: set[str]) -> set[str]:
    """A small set of handles holding one of each option set (greedy; ties by name)."""
    chosen: set[str] = set()
    left = [o for o in options if not o & already]
    while left:
        counts: dict[str, int] = {}
        for option in left:
            for handle in option:
                counts[handle] = counts.get(handle, 0) + 1
        pick = min(counts, key=lambda h: (-counts[h], h))
        chosen.add(pick)
        left = [o for o in left if pick not in o]
    return chosen
