import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxrules.tokens import CountingTokenizer, HeuristicCounter, Tokenizer, load_encoding


def test_starts_at_zero():
    """A new wrapper has recorded no calls and no characters."""
    counting = CountingTokenizer(HeuristicCounter())
    assert (counting.calls, counting.chars) == (0, 0)


@given(texts=st.lists(st.text()))
def test_records_calls_and_chars_exactly(texts):
    """After counting some texts, calls is how many and chars is their total length."""
    inner = HeuristicCounter()
    counting = CountingTokenizer(inner)
    counts = [counting.count(text) for text in texts]
    assert counts == [inner.count(text) for text in texts]
    assert counting.calls == len(texts)
    assert counting.chars == sum(map(len, texts))


def test_delegates_identity():
    """The wrapper reports the inner ruler's name and overhead, and is itself a Tokenizer."""
    inner = load_encoding().unwrap()
    counting = CountingTokenizer(inner)
    assert (counting.name, counting.message_overhead) == ("tiktoken:cl100k_base", 4)
    assert isinstance(counting, Tokenizer)


def test_tallies_are_separate():
    """Two wrappers of the same tokenizer keep separate tallies and are not equal."""
    inner = HeuristicCounter()
    first, second = CountingTokenizer(inner), CountingTokenizer(inner)
    first.count("abc")
    assert (first.calls, second.calls) == (1, 0)
    assert first != second


def test_rejects_non_tokenizer():
    """Wrapping something that is not a Tokenizer fails when the wrapper is built."""
    with pytest.raises(TypeError):
        CountingTokenizer(len)
