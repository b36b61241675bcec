import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxrules.tokens import (
    CJK_CHARS_PER_TOKEN,
    CJK_RANGES,
    ENCODINGS,
    OTHER_CHARS_PER_TOKEN,
    HeuristicCounter,
    Tokenizer,
    load_encoding,
)

HEURISTIC = HeuristicCounter()
CL100K = load_encoding("cl100k_base").unwrap()
TOKENIZERS = pytest.mark.parametrize("tokenizer", [HEURISTIC, CL100K], ids=lambda t: t.name)

SPECIAL_TOKENS = sorted({token for spec in ENCODINGS.values() for token in spec.special_tokens})
texts_with_special_tokens = st.lists(
    st.one_of(st.sampled_from(SPECIAL_TOKENS), st.text(max_size=20)), max_size=8
).map("".join)
# Each example holds at least one lone surrogate; `st.text()` alone never yields one.
surrogate_texts = st.tuples(st.text(), st.characters(categories=["Cs"]), st.text()).map("".join)


@TOKENIZERS
def test_empty_is_zero(tokenizer):
    """Every tokenizer counts the empty text as zero tokens."""
    assert tokenizer.count("") == 0


@TOKENIZERS
def test_is_tokenizer(tokenizer):
    """Both counters satisfy the runtime-checkable Tokenizer protocol."""
    assert isinstance(tokenizer, Tokenizer)


@TOKENIZERS
@given(text=st.text())
def test_count_is_a_deterministic_natural(tokenizer, text):
    """A count is a non-negative int, the same every time, and zero only for the empty text."""
    counted = tokenizer.count(text)
    assert type(counted) is int
    assert counted >= 0
    assert (counted == 0) == (text == "")
    assert tokenizer.count(text) == counted


@TOKENIZERS
@given(text=texts_with_special_tokens)
def test_special_token_text_is_plain_text(tokenizer, text):
    """Text containing special-token markers is counted, never refused."""
    assert tokenizer.count(text) >= 0


@TOKENIZERS
@given(text=surrogate_texts)
def test_lone_surrogates_never_raise(tokenizer, text):
    """Text with lone surrogates, which is not valid UTF-8, is still counted."""
    assert tokenizer.count(text) >= 0


def test_special_token_is_several_tokens():
    """cl100k_base counts "<|endoftext|>" as the 7 plain-text tokens it spells, not 1."""
    assert CL100K.count("<|endoftext|>") == 7


@given(text=st.text(), more=st.text())
def test_heuristic_monotone_under_append(text, more):
    """Appending text never lowers the heuristic count."""
    assert HEURISTIC.count(text) <= HEURISTIC.count(text + more)


@given(text=st.text())
def test_heuristic_matches_reference(text):
    """The heuristic equals the formula computed character by character from `CJK_RANGES`."""
    cjk = sum(any(a <= ord(c) <= b for a, b, _ in CJK_RANGES) for c in text)
    other = len(text) - cjk
    expected = math.ceil(cjk / CJK_CHARS_PER_TOKEN + other / OTHER_CHARS_PER_TOKEN)
    assert HEURISTIC.count(text) == expected
    assert HEURISTIC.count(text) <= len(text)


@given(text=st.text())
def test_tiktoken_bounded_by_utf8_bytes(text):
    """A BPE token covers at least one byte, so cl100k_base never exceeds the UTF-8 length."""
    assert CL100K.count(text) <= len(text.encode())
