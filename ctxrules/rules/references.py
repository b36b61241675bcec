"""The reference tracker: which items a later message still refers to (reference 001 §3.3)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import attrs
from immutables import Map
from pyrsistent import PVector, pvector

from ctxrules.commit import ContextItem
from ctxrules.rules.text import ascii_runs, byte_table

MAX_PER_MESSAGE = 32
#: Characters the tracker reads from each end of a longer text: the middle of a huge tool
#: result is cut before any request shows it (``cap_tool_result`` keeps 4,000 characters
#: by default), and reading it whole would make a turn cost the result's size.
READ_CHARS = 16_000
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
# A whole run of word characters (\w) that is all ASCII letters and digits: an id or a
# CamelCase name. The lookbehind after the first character checks the word boundary
# before it, so the engine skips ahead to candidates instead of trying every position
# (``\b[A-Za-z0-9]...`` tries them all: three times slower).
_ALNUM_RUN = re.compile(r"[A-Za-z0-9](?<!\w[A-Za-z0-9])[A-Za-z0-9]*+(?!\w)")
_BACKTICK_SPAN = re.compile(r"`([^`\n]{3,40})`")
# A quoted name is printable: a span holding control characters (binary output read as
# text) is no reference, and a NUL could not even be kept in a PostgreSQL text column.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ID_DIGITS = "0123456789abcdef"


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
# Splitting on blanks after a byte translation finds the runs a regular expression finds,
# several times faster (`ascii_runs`).
_WORD_BYTES = byte_table(_ALNUM + "_./`-")
_WORD_CHAR_BYTES = byte_table(_ALNUM + "_")


def _words(text: str) -> list[str]:
    """The words of ``text`` in order: runs of ASCII letters, digits and ``_./`-``.

    Every path lies inside one word; a later message's words are what it may mention.
    """
    return ascii_runs(text, _WORD_BYTES)


def _word_runs(text: str) -> list[str]:
    """``_ALNUM_RUN.findall(text)``: the whole word runs that are ASCII letters and digits."""
    if not text.isascii():
        # Beyond ASCII a run may go on into a letter the table would blank.
        return _ALNUM_RUN.findall(text)
    return [run for run in ascii_runs(text, _WORD_CHAR_BYTES) if run.isalnum()]


def distinctive_substrings(text: str) -> tuple[str, ...]:
    """Up to 32 distinctive substrings of ``text``: paths, ids, backtick spans, CamelCase.

    >>> distinctive_substrings("Edit src/app/main.py at 0a1b2c3d, see `run_all()` in TurnAger")
    ('src/app/main.py', '0a1b2c3d', 'run_all()', 'Edit', 'TurnAger')
    """
    return _substrings(text, _distinct_words(text))


def _distinct_words(text: str) -> tuple[str, ...]:
    """The `_words` of ``text``, each once, in order of first occurrence."""
    return tuple(dict.fromkeys(_words(text)))


def _substrings(text: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """`distinctive_substrings` of ``text``, given its `_distinct_words`."""
    values = _ordered_values(text, words)
    found: list[str] = []
    seen: set[str] = set()
    for value in values:
        if value in STOP_WORDS or value in seen:
            continue
        seen.add(value)
        found.append(value)
        if len(found) == MAX_PER_MESSAGE:
            break
    return tuple(found)


def _ordered_values(text: str, words: tuple[str, ...]) -> Iterator[str]:
    """Paths of 8 characters or more, then ids, backtick spans and CamelCase, in text order.

    A path (a run of path characters with a slash inside) is a backtick-free piece of one
    word, so it is read from the distinct words; ids and CamelCase names are whole word
    runs of ASCII letters and digits, read by one scan. Distinct values in order of first
    occurrence give each kind in the order the plain patterns find it.
    """
    for word in words:
        if "/" in word:
            for piece in word.split("`") if "`" in word else (word,):
                if len(piece) >= 8 and "/" in piece[1:-1]:
                    yield piece
    runs = dict.fromkeys(_word_runs(text))
    yield from (run for run in runs if len(run) >= 6 and not run.strip(_ID_DIGITS))
    if "`" in text:
        spans = (match.group(1) for match in _BACKTICK_SPAN.finditer(text))
        yield from (span for span in spans if not _CONTROL.search(span))
    yield from (run for run in runs if len(run) >= 4 and "A" <= run[0] <= "Z")


def _candidates(words: tuple[str, ...], distinct: tuple[str, ...]) -> set[str]:
    # What a later message may mention: its own distinctive substrings and its plain words,
    # so `name` in one message matches a bare name in another.
    return {w.strip("`.,;:()[]{}") for w in words} | set(distinct)


def _ends(text: str) -> str:
    """The text, or its first and last `READ_CHARS` characters when it is longer."""
    if len(text) <= 2 * READ_CHARS:
        return text
    return f"{text[:READ_CHARS]}\n{text[-READ_CHARS:]}"


def item_text(item: ContextItem) -> str:
    """The text of an item the tracker reads: its rendering and, for tools, the arguments.

    Of a text longer than twice `READ_CHARS` only both ends are read, so observing an item
    costs a bounded amount however large its original.

    >>> huge = ContextItem("n", "tool", rendered="a/b/c.py " * 1_000_000, arguments="{}")
    >>> len(item_text(huge)) <= 2 * READ_CHARS + 4
    True
    """
    rendered = _ends(item.rendered)
    return f"{rendered}\n{_ends(item.arguments)}" if item.arguments else rendered


@attrs.frozen
class TrackerChanges:
    """What one `ReferenceTracker.observe` changed: what a store writes to keep the tracker.

    ``words`` were set or dropped in the index, ``cited`` newly cited; ``base`` is the
    `id` of the tracker observed from (a writer that kept that tracker writes only these).
    """

    words: frozenset[str]
    cited: tuple[str, ...]
    base: int


@attrs.frozen
class ReferenceTracker:
    """Incremental reference map: feed items in order; ``cited`` holds ids a later item mentions.

    Matching is by equal substrings (a later message's words and distinctive substrings
    against earlier items' distinctive substrings), so each new item costs its own length.
    ``index`` and ``cited`` (a set: its keys) are HAMTs (``immutables.Map``): they grow
    with the session, and each turn's new version is a few small nodes rather than one
    large object for the cyclic GC to walk. ``changes`` says what the last `observe`
    changed (so a store keeps the tracker writing only that).
    """

    index: Map[str, PVector[str]] = attrs.field(factory=Map)
    cited: Map[str, None] = attrs.field(factory=Map)
    changes: TrackerChanges | None = attrs.field(default=None, eq=False, repr=False)

    def observe(self, items: Iterable[ContextItem]) -> ReferenceTracker:
        """The tracker after reading ``items`` (newest last).

        >>> a = ContextItem("n1", "tool", rendered="wrote src/pkg/mod.py")
        >>> b = ContextItem("n2", "assistant", rendered="Now test src/pkg/mod.py")
        >>> sorted(ReferenceTracker().observe([a, b]).cited)
        ['n1']
        """
        index, cited = self.index, self.cited
        touched: set[str] = set()
        newly: list[str] = []
        for item in items:
            text = item_text(item)
            # One scan for words per item: its substrings are both what it may mention and
            # what later items may mention of it.
            words = _distinct_words(text)
            distinct = _substrings(text, words)
            for word in _candidates(words, distinct):
                sources = index.get(word)
                if sources is None:
                    continue
                for source in sources:
                    if source != item.source_node_id and source not in cited:
                        cited = cited.set(source, None)
                        newly.append(source)
                # Each substring marks its items once; later mentions find nothing to do.
                index = index.delete(word)
                touched.add(word)
            if item.source_node_id in cited:
                continue
            for substring in distinct:
                index = index.set(
                    substring, index.get(substring, pvector()).append(item.source_node_id)
                )
                touched.add(substring)
        return ReferenceTracker(
            index, cited, TrackerChanges(frozenset(touched), tuple(newly), id(self))
        )
