"""Reading a long original page by page costs about one count of it, not one per page.

A page's bounds follow from every page before it, so each recall of a 5 MB original cut
the whole text again: about a second a page, and a replay's audit, which reads every
hidden original page by page, did not end in five minutes on a session with such
outputs. Work is counted in characters given to the ruler, which is exact.
"""

from __future__ import annotations

from ctxrules.recall import answer_recall, page_bounds
from ctxrules.recall.lookup import Original
from ctxrules.recall.paging import REMEMBER_FROM
from tests.counting_ruler import CountingRuler


class OneOriginal:
    """A `Handles` of one original, read from a new string object on each lookup (as a store does)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def ambiguous(self, handle: str) -> bool:
        """No two sources share a handle here."""
        return not handle

    def get(self, handle: str) -> Original | None:
        """The original, its text a fresh copy."""
        copy = "".join([self.text[i : i + 4096] for i in range(0, len(self.text), 4096)])
        return Original(handle, "node", "t1", copy, "cat")


def long_text(lines: int) -> str:
    """A tool output of many distinct lines."""
    return "".join(
        f"src/pkg/mod_{n}.py:{n}: def handler_{n}(request): return None\n" for n in range(lines)
    )


def test_paging_through_a_long_original_counts_it_about_once() -> None:
    """Every page of a 400 kB original, in order: under one and a half counts of its text in all.

    Each page is first guessed at the page before's characters a token (2.3 counts before).
    """
    text = long_text(6_000)
    assert len(text) >= REMEMBER_FROM
    ruler = CountingRuler()
    handles = OneOriginal(text)
    first = answer_recall(handles, {"handle": "h:x", "page": 1}, tokenizer=ruler, page_tokens=2_000)
    bodies = [first.body]
    for page in range(2, first.pages + 1):
        answer = answer_recall(
            handles, {"handle": "h:x", "page": page}, tokenizer=ruler, page_tokens=2_000
        )
        assert not answer.is_error
        bodies.append(answer.body)
    assert first.pages >= 20
    assert "".join(bodies) == text
    assert ruler.characters <= 1.5 * len(text), (first.pages, ruler.characters / len(text))


def test_remembered_pages_are_the_pages_worked_out() -> None:
    """The same bounds from the memo as cut afresh, for another ruler and another size alike."""
    text = long_text(3_000)
    counting, other = CountingRuler(), CountingRuler()
    once = page_bounds(text, 500, counting)
    assert page_bounds(text, 500, counting) == once
    counted = counting.characters
    assert page_bounds(text, 500, counting) == once
    assert counting.characters == counted  # remembered: not cut again
    assert page_bounds(text, 500, other) == once
    assert other.characters > 0  # another ruler cuts again
    assert page_bounds(text, 400, counting) != once
    assert page_bounds(text[:-1], 500, counting)[-1][1] == len(text) - 1
