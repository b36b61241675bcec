"""Cutting a recalled original into pages of at most a given number of tokens."""

from __future__ import annotations

from ctxrules.tokens import Tokenizer

#: A first guess of characters per token; shrunk until the page fits.
_CHARS_PER_TOKEN = 4


def _page_end(text: str, start: int, limit: int, tokenizer: Tokenizer, max_chars: int) -> int:
    """Where the page from ``start`` ends: at most ``limit`` tokens and ``max_chars`` chars, at least one."""
    end = min(len(text), start + limit * _CHARS_PER_TOKEN, start + max(max_chars, 1))
    while end - start > 1 and tokenizer.count(text[start:end]) > limit:
        end = start + max(1, (end - start) * 3 // 4)
    if end < len(text):
        # Prefer to end after a newline in the page's last quarter: pages read as lines.
        cut = text.rfind("\n", start + (end - start) * 3 // 4, end)
        if cut >= start:
            end = cut + 1
    return end


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
    bounds: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end = _page_end(text, start, max(limit, 1), tokenizer, max_chars or len(text))
        bounds.append((start, end))
        start = end
    return tuple(bounds)
