"""The words PostgreSQL's index is built from: folded at once, equal to folding each word."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxrules.store.postgres.words import WORD, split_words, words


@given(st.text())
def test_folding_the_joined_words_is_folding_each_word(text: str) -> None:
    """Any text: the words indexed are the words a query splits."""
    # `words` folds the joined string in one call; the index and the query (`split_words`,
    # word by word) must see the same words, or a search misses what was indexed.
    assert words(text) == " ".join(split_words(text))
    assert words(text) == " ".join(w.casefold() for w in WORD.findall(text))


def test_letters_whose_folding_depends_on_context_fold_alike() -> None:
    """Final sigma, sharp s, dotted I, a titlecase digraph and a ligature."""
    # Final sigma: `str.lower` looks at the neighbours, `casefold` does not.
    for text in ("ΟΔΟΣ ΟΔΟΣ", "straße STRASSE", "İstanbul ǅ ﬁle"):
        assert words(text).split(" ") == split_words(text)
