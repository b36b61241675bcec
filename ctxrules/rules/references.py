"""The reference tracker: which items a later message still refers to (reference 001 §3.3)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import attrs
from immutables import Map
from pyrsistent import PVector, pvector

from ctxrules.commit import ContextItem

MAX_PER_MESSAGE = 32
# Each pattern starts with a character class and checks the word boundary before it by a
# lookbehind, so the regular expression engine skips ahead to candidate characters instead
# of trying every position (``\b[A-Z]...`` tries them all: three times slower).
_PATTERNS = (
    # Paths: the leftmost match of ``[run]+/[run]+`` in a run of path characters is the
    # whole run, when a slash stands inside it; this matches just that, without backtracking.
    re.compile(r"[A-Za-z0-9_./-](?<![A-Za-z0-9_./-]{2})[A-Za-z0-9_.-]*+/[A-Za-z0-9_./-]++"),
    re.compile(r"[a-f0-9](?<!\w[a-f0-9])[a-f0-9]{5,}\b"),  # hex or numeric ids, 6+ digits
    re.compile(r"`([^`\n]{3,40})`"),  # backtick spans
    re.compile(r"[A-Z](?<!\w[A-Z])[A-Za-z0-9]{3,}\b"),  # CamelCase and capitalised identifiers
)
STOP_WORDS = frozenset(
    {
        "the",
        "and",
        "True",
        "False",
        "None",
        "TextContent",
        "AssistantMessage",
        "UserMessage",
        "This",
        "That",
        "There",
        "When",
        "What",
        "Note",
    }
)
_WORD = re.compile(r"[A-Za-z0-9_./`-]+")


def distinctive_substrings(text: str) -> tuple[str, ...]:
    """Up to 32 distinctive substrings of ``text``: paths, ids, backtick spans, CamelCase.

    >>> distinctive_substrings("Edit src/app/main.py at 0a1b2c3d, see `run_all()` in TurnAger")
    ('src/app/main.py', '0a1b2c3d', 'run_all()', 'Edit', 'TurnAger')
    """
    found: list[str] = []
    seen: set[str] = set()
    for value in _values(text):
        if value in STOP_WORDS or value in seen:
            continue
        seen.add(value)
        found.append(value)
        if len(found) == MAX_PER_MESSAGE:
            break
    return tuple(found)


def _values(text: str) -> Iterator[str]:
    """Paths of 8 characters or more, then ids, backtick spans and CamelCase, lazily."""
    for index, pattern in enumerate(_PATTERNS):
        for match in pattern.finditer(text):
            value = match.group(1) if match.groups() else match.group(0)
            if index > 0 or len(value) >= 8:
                yield value


def _candidates(text: str, distinct: tuple[str, ...]) -> set[str]:
    # What a later message may mention: its own distinctive substrings and its plain words,
    # so `name` in one message matches a bare name in another.
    # A long output repeats its words: strip each distinct word once.
    words = {w.strip("`.,;:()[]{}") for w in set(_WORD.findall(text))}
    return words | set(distinct)


def item_text(item: ContextItem) -> str:
    """The text of an item the tracker reads: its rendering and, for tools, the arguments."""
    return f"{item.rendered}\n{item.arguments}" if item.arguments else item.rendered


@attrs.frozen
class ReferenceTracker:
    """Incremental reference map: feed items in order; ``cited`` holds ids a later item mentions.

    Matching is by equal substrings (a later message's words and distinctive substrings
    against earlier items' distinctive substrings), so each new item costs its own length.
    ``index`` and ``cited`` (a set: its keys) are HAMTs (``immutables.Map``): they grow
    with the session, and each turn's new version is a few small nodes rather than one
    large object for the cyclic GC to walk.
    """

    index: Map[str, PVector[str]] = attrs.field(factory=Map)
    cited: Map[str, None] = attrs.field(factory=Map)

    def observe(self, items: Iterable[ContextItem]) -> ReferenceTracker:
        """The tracker after reading ``items`` (newest last).

        >>> a = ContextItem("n1", "tool", rendered="wrote src/pkg/mod.py")
        >>> b = ContextItem("n2", "assistant", rendered="Now test src/pkg/mod.py")
        >>> sorted(ReferenceTracker().observe([a, b]).cited)
        ['n1']
        """
        index, cited = self.index, self.cited
        for item in items:
            text = item_text(item)
            # The regular expressions run once per item: its substrings are both what it
            # may mention and what later items may mention of it.
            distinct = distinctive_substrings(text)
            for word in _candidates(text, distinct):
                sources = index.get(word)
                if sources is None:
                    continue
                for source in sources:
                    if source != item.source_node_id and source not in cited:
                        cited = cited.set(source, None)
                # Each substring marks its items once; later mentions find nothing to do.
                index = index.delete(word)
            if item.source_node_id in cited:
                continue
            for substring in distinct:
                index = index.set(
                    substring, index.get(substring, pvector()).append(item.source_node_id)
                )
        return ReferenceTracker(index, cited)
