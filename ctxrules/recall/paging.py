"""Cutting a recalled original into pages of at most a given number of tokens."""

from __future__ import annotations

import threading
from collections import OrderedDict

from ctxrules.tokens import Tokenizer
from ctxrules.tokens.protocol import WrapsRuler

#: A first guess of characters per token for a text's first page; shrunk until it fits.
_CHARS_PER_TOKEN = 4.0
#: A guess over the limit is scaled to this share of what would just fit by its count.
_UNDER = 0.97
#: Texts from this many characters have their pages remembered (`page_bounds`).
REMEMBER_FROM = 65_536
#: How many long texts' pages are remembered, and how many characters of them in all.
REMEMBERED_TEXTS = 8
REMEMBERED_CHARS = 16_000_000

_Key = tuple[int, int, int, int]
_Bounds = tuple[tuple[int, int], ...]


class _Remembered:
    """The pages of long texts lately cut, by the text and the cut's arguments.

    `page_bounds` is pure, so a remembered answer is its answer. A page's bounds follow from
    every page before it, so a model reading a 5 MB original page by page had the whole
    text tokenized again for each page (about a second each). A text is found by its hash
    (which Python keeps on the string) and its length, then compared whole; the ruler is
    held beside its answer and compared (under its wrappers, by equality), since only the
    same ruler gives the same pages.
    The texts are held, so they are few and bounded in characters, least lately read out
    first: a model, like a replay's audit, reads one original's pages one after another.
    """

    def __init__(self, entries: int, characters: int) -> None:
        self.entries, self.characters = entries, characters
        self.held = 0
        self.found: OrderedDict[_Key, tuple[str, Tokenizer, _Bounds]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: _Key, text: str, tokenizer: Tokenizer) -> _Bounds | None:
        ruler = _ruler(tokenizer)
        with self.lock:
            found = self.found.get(key)
            if found is None or (found[1] is not ruler and found[1] != ruler):
                return None
            if found[0] is not text and found[0] != text:
                return None
            self.found.move_to_end(key)
            return found[2]

    def keep(self, key: _Key, text: str, tokenizer: Tokenizer, bounds: _Bounds) -> None:
        if len(text) > self.characters:
            return
        with self.lock:
            previous = self.found.pop(key, None)
            if previous is not None:
                self.held -= len(previous[0])
            self.found[key] = (text, _ruler(tokenizer), bounds)
            self.held += len(text)
            while len(self.found) > self.entries or self.held > self.characters:
                _, (oldest, _, _) = self.found.popitem(last=False)
                self.held -= len(oldest)


_REMEMBERED = _Remembered(REMEMBERED_TEXTS, REMEMBERED_CHARS)


def _ruler(tokenizer: Tokenizer) -> Tokenizer:
    """The ruler under any wrappers: they change how counts are got, never what they are.

    Each `Context` wraps its own memo around one shared ruler: compared as the wrapper, a
    Context opened per request (or reopened) cut a 5 MB original again for every page.
    """
    while isinstance(tokenizer, WrapsRuler):
        tokenizer = tokenizer.inner
    return tokenizer


def _page_end(
    text: str, start: int, limit: int, tokenizer: Tokenizer, *, max_chars: int, per_token: float
) -> tuple[int, float]:
    """Where the page from ``start`` ends, and the characters per token its text counted.

    A page holds at most ``limit`` tokens and ``max_chars`` characters, and at least one
    character. The first guess is ``per_token`` characters a token (the page before's); a
    guess over the limit is scaled by what it counted, a little under, until it fits. A
    text's pages are alike, so most are counted once: a fixed guess of 4 and cuts of a
    quarter counted most pages of code twice.
    """
    end = min(len(text), start + max(int(limit * per_token), 1), start + max(max_chars, 1))
    tokens = tokenizer.count(text[start:end])
    measured = (end - start) / max(tokens, 1)
    while end - start > 1 and tokens > limit:
        scaled = (end - start) * limit * _UNDER // tokens
        end = start + max(1, min(int(scaled), end - start - 1))
        tokens = tokenizer.count(text[start:end])
        measured = (end - start) / max(tokens, 1)
    if end < len(text):
        # Prefer to end after a newline in the page's last quarter: pages read as lines.
        cut = text.rfind("\n", start + (end - start) * 3 // 4, end)
        if cut >= start:
            end = cut + 1
    return end, measured


def page_bounds(
    text: str, limit: int, tokenizer: Tokenizer, max_chars: int | None = None
) -> tuple[tuple[int, int], ...]:
    r"""The (start, end) of each page: contiguous, covering the text, each within ``limit`` tokens.

    ``max_chars``, when given, also bounds each page's length in characters. A single
    character over the limit still makes a page of its own, so paging always ends.

    >>> from ctxrules.tokens import HeuristicCounter
    >>> bounds = page_bounds("line\n" * 100, 20, HeuristicCounter())
    >>> bounds[0][0], bounds[-1][1], all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    (0, 500, True)
    >>> page_bounds("", 20, HeuristicCounter())
    ((0, 0),)
    >>> max(end - start for start, end in page_bounds("line\n" * 100, 20, HeuristicCounter(), 30))
    30
    """
    if not text:
        return ((0, 0),)
    if len(text) < REMEMBER_FROM:
        return _cut(text, limit, tokenizer, max_chars)
    key = (hash(text), len(text), limit, -1 if max_chars is None else max_chars)
    found = _REMEMBERED.get(key, text, tokenizer)
    if found is None:
        found = _cut(text, limit, tokenizer, max_chars)
        _REMEMBERED.keep(key, text, tokenizer, found)
    return found


def _cut(text: str, limit: int, tokenizer: Tokenizer, max_chars: int | None) -> _Bounds:
    """`page_bounds` worked out: each page from the end of the one before."""
    bounds: list[tuple[int, int]] = []
    start, per_token = 0, _CHARS_PER_TOKEN
    while start < len(text):
        end, per_token = _page_end(
            text,
            start,
            max(limit, 1),
            tokenizer,
            max_chars=max_chars or len(text),
            per_token=per_token,
        )
        bounds.append((start, end))
        start = end
    return tuple(bounds)
