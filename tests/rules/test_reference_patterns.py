"""The reference tracker's substrings, against the patterns they are defined by.

`distinctive_substrings` reads paths from a text's distinct words and ids and CamelCase names
from one scan of its ASCII word runs, to run fast; these tests hold it to the plain
definitions, written as four regular expressions: paths of 8
characters or more, hex or numeric ids of 6 digits or more, backtick spans, CamelCase,
in that order, stop words and repeats left out, at most 32.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from ctxrules.commit import ContextItem
from ctxrules.rules.references import (
    MAX_PER_MESSAGE,
    STOP_WORDS,
    ReferenceTracker,
    distinctive_substrings,
)

_PLAIN = (
    re.compile(r"[A-Za-z0-9_./-]+/[A-Za-z0-9_./-]+"),
    re.compile(r"\b(?:[a-f0-9]{6,}|[0-9]{6,})\b"),
    re.compile(r"`([^`\n]{3,40})`"),
    re.compile(r"\b[A-Z][A-Za-z0-9]{3,}\b"),
)


def plain_substrings(text: str) -> tuple[str, ...]:
    """The definition, written the slow and obvious way."""
    found: list[str] = []
    for index, pattern in enumerate(_PLAIN):
        for match in pattern.finditer(text):
            value = match.group(1) if match.groups() else match.group(0)
            if (index == 0 and len(value) < 8) or value in STOP_WORDS or value in found:
                continue
            found.append(value)
            if len(found) == MAX_PER_MESSAGE:
                return tuple(found)
    return tuple(found)


# Characters that sit on each pattern's edges: path characters, hex digits, capitals,
# backticks, a word character outside ASCII, separators.
_TEXT = st.text(alphabet="aAbBfFzZ09_/.-`数 \n:xXTurnAger1234deadbeef", max_size=80)


@given(_TEXT)
def test_the_fast_patterns_find_what_the_plain_ones_find(text: str) -> None:
    """Same substrings in the same order, on texts built from the patterns' edge characters."""
    assert distinctive_substrings(text) == plain_substrings(text)


@given(st.text(alphabet="aAbfZz09_/.-`, \n()Turnbeef", max_size=120))
def test_the_same_on_ascii_texts(text: str) -> None:
    """ASCII texts (most tool output): repeats, backticks inside paths, ids beside capitals."""
    assert distinctive_substrings(text) == plain_substrings(text)


def test_edges_of_each_pattern() -> None:
    """A slash at a run's end or start, ids inside words, CamelCase after a word character."""
    cases = {
        "see src/ and /usr and a/b": (),  # short, or no slash inside a run
        "edit /usr/lib/x.py now": ("/usr/lib/x.py",),
        "ids 0a1b2c3d x0a1b2c3d 1234567 12345 数abcdef": ("0a1b2c3d", "1234567"),
        "TurnAger _TurnAger 数TurnAger Turn_Ager": ("TurnAger",),
        "`run_all()` `ab` the True None": ("run_all()",),
    }
    for text, expected in cases.items():
        assert distinctive_substrings(text) == expected, text
        assert plain_substrings(text) == expected, text


def test_beyond_ascii_a_run_ends_only_at_a_non_word_character() -> None:
    """A letter beyond ASCII continues a run, a dash or a lone surrogate ends it, as in ``re``."""
    text = "数abcdef —abcdef— éTurnAger —TurnAger \ud800src/pkg/mod.py\ud800 x"
    assert distinctive_substrings(text) == plain_substrings(text)
    assert distinctive_substrings(text) == ("src/pkg/mod.py", "abcdef", "TurnAger")


def test_at_most_32_are_kept_paths_first() -> None:
    """Paths come before ids, and the list stops at 32."""
    text = " ".join(f"TurnAger{k} src/pkg/mod_{k}.py" for k in range(40))
    found = distinctive_substrings(text)
    assert len(found) == MAX_PER_MESSAGE
    assert found[0] == "src/pkg/mod_0.py"
    assert all("/" in value for value in found)


def test_a_later_item_cites_an_earlier_one_by_a_shared_substring() -> None:
    """An item is cited when a later one names its path; one that nothing names is not."""
    tracker = ReferenceTracker().observe(
        [
            ContextItem("t1", "tool", rendered="wrote src/pkg/mod.py"),
            ContextItem("t2", "tool", rendered="nothing to see"),
            ContextItem("a1", "assistant", rendered="Now run the tests of src/pkg/mod.py"),
        ]
    )
    assert sorted(tracker.cited) == ["t1"]
