import pytest

from ctxrules.tokens import CJK_RANGES, HeuristicCounter, Tokenizer


def _is_cjk(code_point: int) -> bool:
    return any(first <= code_point <= last for first, last, _ in CJK_RANGES)


def test_empty_is_zero():
    """The empty text has no tokens."""
    assert HeuristicCounter().count("") == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a", 1),
        ("a" * 19, 5),  # exactly 19 / 3.8
        ("a" * 20, 6),
        ("一" * 13, 10),  # exactly 13 / 1.3; a float formula rounds this up to 11
        ("一" * 14, 11),
        ("Hello, 世界", 4),  # ceil(7 / 3.8 + 2 / 1.3) = ceil(3.38...)
        ("ひらがなカタカナ한국어", 9),  # ceil(11 / 1.3)
    ],
)
def test_formula(text, expected):
    """Counts are ceil(cjk / 1.3 + other / 3.8), computed exactly rather than in floats."""
    assert HeuristicCounter().count(text) == expected


@pytest.mark.parametrize(("first", "last", "block"), CJK_RANGES)
def test_range_ends_are_cjk(first, last, block):
    """Both ends of every CJK range are counted at 1.3 characters per token."""
    counter = HeuristicCounter()
    assert counter.count(chr(first) * 13) == 10, block
    assert counter.count(chr(last) * 13) == 10, block


@pytest.mark.parametrize(
    "code_point",
    sorted({c for first, last, _ in CJK_RANGES for c in (first - 1, last + 1) if not _is_cjk(c)}),
)
def test_just_outside_ranges_is_other(code_point):
    """A character just outside every CJK range is counted at 3.8 characters per token."""
    assert HeuristicCounter().count(chr(code_point) * 19) == 5


def test_identity():
    """The heuristic names itself, charges 4 tokens per message and is a Tokenizer."""
    counter = HeuristicCounter()
    assert (counter.name, counter.message_overhead) == ("heuristic", 4)
    assert isinstance(counter, Tokenizer)


@pytest.mark.parametrize("overhead", [-1, 1.5, "4"])
def test_rejects_bad_overhead(overhead):
    """A negative or non-integer message overhead is refused when the counter is built."""
    with pytest.raises((TypeError, ValueError)):
        HeuristicCounter(message_overhead=overhead)
