"""`MemoCounter`: the same counts as its ruler, each recent text tokenized once, bounded."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxrules.engine import DefaultContextEngine
from ctxrules.tokens import CountingTokenizer, HeuristicCounter
from ctxrules.tokens.memo import MemoCounter, memoized


@given(st.lists(st.text(max_size=40), max_size=30))
def test_counts_are_the_inner_rulers(texts: list[str]) -> None:
    """A memo never changes a count, whatever the order of repeats and evictions."""
    ruler = HeuristicCounter()
    memo = MemoCounter(ruler, entries=4, characters=60)
    assert [memo.count(t) for t in texts] == [ruler.count(t) for t in texts]


def test_a_repeated_text_is_tokenized_once() -> None:
    """Five counts of two texts ask the ruler twice."""
    counting = CountingTokenizer(HeuristicCounter())
    memo = MemoCounter(counting)
    first = [memo.count(t) for t in ("bash", "read_file", "bash", "bash", "read_file")]
    assert first == [
        counting.inner.count(t) for t in ("bash", "read_file", "bash", "bash", "read_file")
    ]
    assert counting.calls == 2


def test_the_oldest_text_is_forgotten_past_the_entry_bound() -> None:
    """With room for two texts, the third pushes out the first."""
    counting = CountingTokenizer(HeuristicCounter())
    memo = MemoCounter(counting, entries=2)
    for text in ("a", "b", "c", "b", "c"):
        memo.count(text)
    assert counting.calls == 3  # b and c stayed
    memo.count("a")  # forgotten when c came in
    assert counting.calls == 4


def test_the_characters_held_are_bounded() -> None:
    """Past the character bound the oldest goes; a text longer than the bound is never kept."""
    counting = CountingTokenizer(HeuristicCounter())
    memo = MemoCounter(counting, characters=10)
    memo.count("x" * 6)
    memo.count("y" * 6)  # over 10 characters: the x's go
    memo.count("z" * 11)  # longer than the bound: never kept
    memo.count("z" * 11)
    memo.count("y" * 6)
    assert counting.calls == 4
    memo.count("x" * 6)
    assert counting.calls == 5


def test_the_engine_counts_through_one_memo_and_keeps_the_ruler_name() -> None:
    """The engine wraps the ruler it is given once, and reports the ruler's name."""
    ruler = HeuristicCounter()
    engine = DefaultContextEngine(tokenizer=ruler)
    assert isinstance(engine.tokenizer, MemoCounter)
    assert engine.tokenizer.inner is ruler
    assert engine.tokenizer.name == ruler.name
    assert memoized(engine.tokenizer) is engine.tokenizer
