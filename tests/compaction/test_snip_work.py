"""Snipping one huge text counts it once, not on every pass (issue 33 item 5).

``"A" * 2_000_000`` took 21 s in ``openai()`` and 50 MB did not return in 150 s: snip
counted every block again on each pass, counted the block again to shorten it, and its
bisection started from half the text. Work is counted in characters given to the ruler.
"""

from __future__ import annotations

import pytest

from ctxrules.compaction import snip
from ctxrules.render import Message, TextBlock
from ctxrules.tokens import load_encoding
from ctxrules.tokens.tiktoken_counter import PIECE_CHARS
from tests.counting_ruler import CountingRuler


def test_a_huge_text_is_counted_once_when_snipped() -> None:
    """A 1,000,000-character message cut to 2,000 tokens: about one count of it, not four."""
    size = 1_000_000
    ruler = CountingRuler()
    talk = [
        Message("user", (TextBlock("first"),)),
        Message("assistant", (TextBlock("ok"),)),
        Message("user", (TextBlock("A" * size),)),
    ]
    out = snip(talk, 2_000, ruler)
    assert out.fits
    assert out.shortened == 1
    # The one count of the whole text, then cuts of at most a few times the limit's text.
    assert ruler.characters <= size + 64 * 2_000 * 16


def test_tiktoken_counts_a_long_run_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """No piece longer than PIECE_CHARS goes to BPE, and spaced text counts as whole."""
    counter = load_encoding().unwrap()
    longest: list[int] = []
    encode = counter.encoding.encode_ordinary

    def spy(text: str) -> list[int]:
        longest.append(len(text))
        return encode(text)

    monkeypatch.setattr(counter.encoding, "encode_ordinary", spy)
    counter.count("A" * 100_000)
    assert max(longest) <= PIECE_CHARS
    text = "hello world " * 10_000
    assert counter.count(text) == len(encode(text))
