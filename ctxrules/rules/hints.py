"""Lookup hints: the most distinctive names of a text that a stub or a cut leaves out.

A stub (or the cut middle of a capped result) keeps the names the model is most likely to
need again, exactly spelled (paths, dotted and compound identifiers, long hex ids), in a
bounded, deterministic line; the rest stays one recall away.
"""

from __future__ import annotations

import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.layout import Spans, visible_ranges
from ctxrules.commit.vector import CHUNK, Chunk
from ctxrules.dag import Role
from ctxrules.rules.facts import Facts
from ctxrules.rules.text import plain_words

#: Characters of a text the hints are read from at most: a 50 MB output costs what this does.
READ_CHARS = 200_000
#: Candidates: paths, dotted names, identifiers, hex ids.
_CANDIDATE = re.compile(r"[A-Za-z0-9_.~/-]*[A-Za-z0-9_]")
_V = TypeVar("_V")
_HEX = re.compile(r"[0-9a-f]{7,64}")
#: A line that reports a failure: kept before any name, as the model acts on it. A report
#: says so (``ValueError: …``, ``error[E0425]: …``, ``FAILED …``, ``fatal: …``, ``… not
#: found``); a line of code that merely names an error type (``func f() error {``,
#: ``except ValueError``) is not one, and would take half the hints' room from names.
_ERROR_LINE = re.compile(
    r"^(?:.*(?:error|exception)(?:\[\w+\])?:\s+\S"
    r"|\s*(?:E\s+)?(?:failed|error|fail|fatal|panic|traceback)\b"
    r"|.*\b(?:not found|permission denied|no such file)\b).*$",
    re.IGNORECASE | re.MULTILINE,
)
#: What `_error_line` looks for first: how a match of `_ERROR_LINE`'s second kind begins,
#: and what a line of its first or third kind holds (lower case).
_ERROR_START = re.compile(
    r"^\s*(?:E\s+)?(?:failed|error|fail|fatal|panic|traceback)\b", re.IGNORECASE | re.MULTILINE
)
_WITNESSES = (
    "error:", "error[", "exception:", "exception[", "not found", "permission denied", "no such file",
)  # fmt: skip
_ERROR_CHARS = 120
_MIN_CHARS = 4
#: The roles whose messages the rules never shorten.
_SAID = frozenset({Role.USER, Role.ASSISTANT})
_MAX_CHARS = 120
#: What starts a hints list in a stub or a cut marker.
HINTS_PREFIX = "names: "


def _distinctive(word: str) -> bool:
    """A name worth keeping: not an English word, a number or one short token."""
    if not _MIN_CHARS <= len(word) <= _MAX_CHARS or word.isdigit():
        return False
    in_ascii = word.isascii()
    if "/" in word:
        return len(word) >= 6 and _has_letter(word, in_ascii=in_ascii)
    if _HEX.fullmatch(word):
        # Hex digits only, and not all digits (above): a digit and a letter both.
        return not word.isalpha()
    if "." in word.strip("."):
        parts = [p for p in word.split(".") if p]
        return len(parts) >= 2 and all(p[0].isalpha() or p[0] == "_" for p in parts)
    if "_" in word.strip("_"):
        return True
    return _camel(word, in_ascii=in_ascii)


def _camel(word: str, *, in_ascii: bool) -> bool:
    """Whether ``word`` is a compound name with an inner capital: camelCase or CamelCase."""
    if in_ascii:
        # An ASCII letter is what changes case: compared in C, not character by character.
        rest = word[1:]
        return rest != rest.lower() and word != word.upper()
    return any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)


def _has_letter(word: str, *, in_ascii: bool) -> bool:
    """Whether ``word`` holds a letter (``in_ascii``: it is all ASCII, where letters are what has case)."""
    return word.upper() != word.lower() if in_ascii else any(c.isalpha() for c in word)


def names(text: str) -> list[str]:
    """The distinctive names of ``text``, most frequent first, ties in order of first use.

    >>> names("call parse_args(); then parse_args again via cli.main and src/app/run.py")
    ['parse_args', 'cli.main', 'src/app/run.py']
    """
    # A new list each time: the caller may change it.
    return list(_known_names(text))


def _known_names(text: str) -> tuple[str, ...]:
    """`names` of ``text`` as the memo keeps them (not to be changed)."""
    # Pure, so a remembered answer is its answer: aging reads the same recent turns' texts
    # on every call (a check asked 12,298 times for 2,473 distinct texts).
    key = (text, 0, "", frozenset[str]())
    found = _NAMES.found.get(key)
    if found is None:
        found = _NAMES.keep(key, tuple(_names(text)))
    return found


#: The keys under which an item keeps the names of its text and of its call's arguments.
TEXT_NAMES_KEY = "aging_names"
ARGUMENT_NAMES_KEY = "argument_names"


def item_names(item: ContextItem, *, arguments: bool = False) -> tuple[str, ...]:
    """`names` of the item's text (or its call's ``arguments``), read once per item and kept with it.

    The rules read the same items' names at every batch point (aging's names in use, the
    names in view, the last place each was written): from the item's memo, not the text.
    """
    key = ARGUMENT_NAMES_KEY if arguments else TEXT_NAMES_KEY
    memo = item.memo
    found: tuple[str, ...] | None = memo.get(key) if memo is not None else None  # type: ignore[assignment]
    if found is None:
        found = tuple(names(item.arguments if arguments else item.rendered))
        item.remember(key, found)
    return found


def _names(text: str) -> list[str]:
    if len(text) > READ_CHARS:
        half = READ_CHARS // 2
        text = f"{text[:half]}\n{text[-half:]}"
    # Counted in C (findall, Counter); only distinct words are judged in Python, and the
    # plain ones (most of any text) are set aside in one pass first. ``counts`` holds the
    # distinctive words in order of first use, so a stable sort by count alone breaks ties
    # by that order.
    counts: dict[str, int] = {}
    judged: set[str] = set()  # words found not distinctive
    found = Counter(_CANDIDATE.findall(text))
    plain = set(plain_words(found))
    for raw, seen in found.items():
        if raw in plain:
            continue
        word = raw.strip(".-/~")
        known = counts.get(word)
        if known is not None:
            counts[word] = known + seen
        elif word not in judged:
            if _distinctive(word):
                counts[word] = seen
            else:
                judged.add(word)
    return sorted(counts, key=counts.__getitem__, reverse=True)


def written_names(commit: ContextCommit, since_turn: int) -> frozenset[str]:
    """The distinctive names the assistant wrote from turn ``since_turn`` on: its text and calls.

    Read from the newest item back to the first of that turn, so its cost is the recent
    turns', not the history's.
    """
    found: set[str] = set()
    for item in reversed(commit.items):
        if item.turn < since_turn:
            break
        if item.role is Role.ASSISTANT and item.state is not State.SUMMARY:
            found.update(item_names(item))
        elif item.is_tool and item.arguments:
            found.update(item_names(item, arguments=True))
    return frozenset(found)


def shown_names(commit: ContextCommit, start: int, facts: Facts) -> frozenset[str]:
    """The distinctive names the user's and assistant's messages from ``start`` on show.

    No rule shortens those messages (only a compaction folds them, with the stubs), so a
    name they hold stays in view as long as a stub would: a stub's hints need not repeat it.
    """
    found: set[str] = set()
    # A summarized message shows nothing: its spans go unread.
    for _, chunk, low, high in _runs(commit, start, facts, past=commit.hidden or ()):
        if low == 0 and high == len(chunk):
            found.update(_chunk_names(chunk, _SHOWN_KEY, _shown))
            continue
        for item in chunk[low:high]:
            found.update(_shown(item))
    return frozenset(found)


def last_written(commit: ContextCommit, start: int, facts: Facts) -> dict[str, int]:
    """Each distinctive name the assistant wrote from ``start`` on: the last position it did.

    Its text and its calls' arguments count, as in `written_names`. A result at position
    ``p`` was used after it arrived when some of its names map to a position after ``p``.
    """
    last: dict[str, int] = {}
    for base, chunk, low, high in _runs(commit, start, facts):
        if low == 0 and high == len(chunk):
            last.update({name: base + at for name, at in _chunk_last(chunk).items()})
            continue
        for offset in range(low, high):
            last.update(dict.fromkeys(wrote(chunk[offset]), base + offset))
    return last


def wrote(item: ContextItem) -> tuple[str, ...]:
    """The names the assistant wrote in this item: its text, or its call's arguments."""
    if item.role is Role.ASSISTANT and item.state is not State.SUMMARY:
        return item_names(item)
    if item.is_tool and item.arguments:
        return item_names(item, arguments=True)
    return ()


def _shown(item: ContextItem) -> tuple[str, ...]:
    """The names a user's or assistant's message the rules never shorten shows."""
    return item_names(item) if item.role in _SAID and item.state is State.FULL else ()


#: Keys under which a whole chunk of items keeps what these readers derive from it.
_SHOWN_KEY, _LAST_KEY = "shown_names", "last_written"


def _runs(
    commit: ContextCommit, start: int, facts: Facts, *, past: Spans = ()
) -> Iterator[tuple[int, Chunk, int, int]]:
    """The commit's chunks from ``start`` on (``past`` stepped over), each with its first position.

    Every item yielded counts as visited. A batch point reads every item from the rule's
    mark, and summarized history piles up behind a held result: a whole chunk, which never
    changes, is read once and its answer kept with it (`Chunk.memo`).
    """
    meter = facts.meter
    for low_at, high_at in _whole_chunks(past, start, len(commit.items)):
        position = low_at
        for chunk, low, high in commit.items.runs(low_at, high_at):
            if meter is not None:
                meter.items_visited += high - low
            yield position - low, chunk, low, high
            position += high - low


def _whole_chunks(past: Spans, start: int, length: int) -> Iterator[tuple[int, int]]:
    """The ranges from ``start`` outside ``past``, widened to whole chunks and merged.

    A chunk ``past`` covers entirely is not read; one it covers in part is read whole, so
    its answer is the one kept with it.

    >>> list(_whole_chunks(((10, 200),), 0, 300)), list(_whole_chunks((), 5, 70))
    ([(0, 64), (192, 300)], [(5, 70)])
    """
    merged: list[tuple[int, int]] = []
    for run in visible_ranges(past, length, start):
        low = max(start, run.start - run.start % CHUNK)
        high = min(length, -(-run.stop // CHUNK) * CHUNK)
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return iter(merged)


def _chunk_names(
    chunk: Chunk, key: str, read: Callable[[ContextItem], tuple[str, ...]]
) -> frozenset[str]:
    """The names ``read`` finds in the chunk's items, kept with the chunk under ``key``."""
    found: frozenset[str] | None = chunk.memo.get(key)  # type: ignore[assignment]
    if found is None:
        found = chunk.memo[key] = frozenset(name for item in chunk for name in read(item))
    return found


def _chunk_last(chunk: Chunk) -> dict[str, int]:
    """Each name the assistant wrote in the chunk, with the offset of the last item that did."""
    found: dict[str, int] | None = chunk.memo.get(_LAST_KEY)  # type: ignore[assignment]
    if found is None:
        found = {}
        for offset, item in enumerate(chunk):
            found.update(dict.fromkeys(wrote(item), offset))
        chunk.memo[_LAST_KEY] = found
    return found


#: What an answer is remembered by: `lookup_hints`' arguments.
_Key = tuple[str, int, str, frozenset[str]]


def _size(key: _Key) -> int:
    """The characters a remembered key stands for: its texts, and a name's worth per seen name."""
    return len(key[0]) + len(key[2]) + _MIN_CHARS * len(key[3])


class _Memo(Generic[_V]):
    """Answers lately worked out, by their arguments; bounded by entries and characters, oldest out.

    `lookup_hints` is pure, so a remembered answer is its answer: ``ctxrules check`` reruns
    rules on equal texts thousands of times, and a session ages each result once or twice.
    """

    def __init__(self, entries: int, characters: int) -> None:
        self.entries, self.characters = entries, characters
        self.held = 0
        # Ordered, oldest first: a full memo drops one entry per entry kept, and taking the
        # first key of a plain dict after many such deletions walks their holes (8 us a call).
        self.found: OrderedDict[_Key, _V] = OrderedDict()
        # Rules may run on several threads (an engine's background work): one writer at a time.
        self.lock = threading.Lock()

    def keep(self, key: _Key, value: _V) -> _V:
        size = _size(key)
        if size > self.characters:
            return value
        with self.lock:
            if key in self.found:
                return value
            self.found[key] = value
            self.held += size
            while len(self.found) > self.entries or self.held > self.characters:
                oldest, _ = self.found.popitem(last=False)
                self.held -= _size(oldest)
        return value


#: A check meets about 700 distinct texts of 4-20k characters per spec, each many times.
_MEMO: _Memo[str] = _Memo(entries=4_096, characters=2_000_000)
#: `names` of texts lately read (a check meets about 2,500 distinct texts, 8M characters).
_NAMES: _Memo[tuple[str, ...]] = _Memo(entries=4_096, characters=2_000_000)


def lookup_hints(
    text: str,
    chars: int,
    shown: str = "",
    seen: frozenset[str] = frozenset(),
    *,
    failure: str | None = None,
) -> str:
    """``names: a, b, …`` of ``text``'s distinctive names not in ``shown`` nor ``seen``, within ``chars``.

    ``seen`` holds names the request shows elsewhere (`shown_names`): the bounded room goes
    to names the model cannot see.

    The first line reporting a failure (an error, a traceback, "not found"), cut to 120
    characters, comes first when it takes at most half the room.

    Empty when ``chars`` leaves no room or the text has no such name. ``failure``, when
    given, is `failure_line` of ``text``, already read (`item_failure`).

    >>> lookup_hints("use parse_args and load_config; parse_args twice", 40, shown="load_config")
    'names: parse_args'
    """
    if seen:
        # Only the text's own names in ``seen`` change the answer: keyed by those, a result
        # stubbed again at the next batch point finds its answer though the request grew.
        seen = seen.intersection(_known_names(text))
    key = (text, chars, shown, seen)
    found = _MEMO.found.get(key)
    if found is None:
        found = _lookup_hints(text, chars, shown, seen, failure)
        _MEMO.keep(key, found)
    return found


def failure_line(text: str) -> str:
    r"""The first line of ``text`` reporting a failure, on one line and cut to 120 characters; or "".

    >>> failure_line("ok\nValueError: bad  value\nmore")
    'ValueError: bad value'
    """
    error = _error_line(text[:READ_CHARS])
    return " ".join(error.group().split())[:_ERROR_CHARS] if error else ""


#: The key under which an item keeps `failure_line` of its text.
FAILURE_KEY = "failure_line"


def item_failure(item: ContextItem) -> str:
    """`failure_line` of the item's text, read once per item and kept with it.

    A pending result's stub is built again at every batch point weighed and declined, each
    time with other names in view: the line it leads with is the same every time.
    """
    memo = item.memo
    found: str | None = memo.get(FAILURE_KEY) if memo is not None else None  # type: ignore[assignment]
    if found is None:
        found = failure_line(item.rendered)
        item.remember(FAILURE_KEY, found)
    return found


def _lookup_hints(
    text: str, chars: int, shown: str, seen: frozenset[str], failure: str | None
) -> str:
    room = chars - len(HINTS_PREFIX)
    kept: list[str] = []
    line = failure_line(text) if failure is None else failure
    if line and line not in shown and len(line) + 2 <= room // 2:
        kept.append(line)
        room -= len(line)
    for name in _known_names(text):
        if name in shown or name in seen:
            continue
        cost = len(name) + (2 if kept else 0)
        if cost > room:
            continue
        kept.append(name)
        room -= cost
        if room < _MIN_CHARS:
            break
    return f"{HINTS_PREFIX}{', '.join(kept)}" if kept else ""


def _error_line(text: str) -> re.Match[str] | None:
    """``_ERROR_LINE.search(text)``, tried only on the lines a match can begin on.

    Each match has a witness that plain string search finds (the pattern's backtracking
    over every line cost more than the rest of the hints): its second kind begins with
    `_ERROR_START`, its first and third kinds hold one of `_WITNESSES` on the line they
    begin. So the first match, if any, begins on the line of the first witness, or later.
    """
    lowered = text.lower()
    # Letters that match the words' letters regardless of case but do not lower to them.
    if len(lowered) != len(text) or any(odd in text for odd in "\u0130\u0131\u017f"):
        return _ERROR_LINE.search(text)

    def witness(word: str, done: int) -> int:
        """Where the next witness of this kind is, at or after ``done`` (-1: none left)."""
        if word:
            return lowered.find(word, done)
        start = _ERROR_START.search(text, done)
        return -1 if start is None else start.start()

    done = 0  # no match begins before this position
    found = {word: witness(word, done) for word in (*_WITNESSES, "")}
    while True:
        # Each kind is looked for again only once passed: the text is read once per kind.
        found.update([(word, witness(word, done)) for word, at in found.items() if 0 <= at < done])
        near = [at for at in found.values() if at >= 0]
        if not near:
            return None
        at = min(near)
        match = _ERROR_LINE.match(text, text.rfind("\n", 0, at) + 1)
        if match is not None:
            return match
        done = text.find("\n", at) + 1
        if not done:
            return None
