"""The history index finds where a reference first stood without reading every word of the history.

The texts are searched for the strings a reply names (in C); only the region around an
occurrence is read by the extractor. Work is counted: the words judged, not the time.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ctxrules.fidelity.extract as extract_module
import ctxrules.fidelity.index as index_module
from ctxrules.dag import Call, Graph
from ctxrules.fidelity import HistoryIndex, atoms
from ctxrules.fidelity.extract import TokenMemo, pieces, pieces_of
from ctxrules.fidelity.index import gap_regions
from ctxrules.rules.text import ascii_runs

TEXTS = (
    "The Quick brown fox jumps over 12345 lazy dogs, a b c; Über naïve café 中文 text.",
    "Fixed `parse_config` in src/app/config.py (see 966e0df2); ContextItem HTTP ABcd x.py",
    "see https://example.com/a/b.html. and ./run.sh --no-verify v0.4.3 self.max_chars",
    'an escaped "\\nDone" and a//b//c.txt, /span, ~/notes/x_y.md, +@~plus, 1.5rem 123456ms',
    "--dry..run_x and x/--a..b_c/y.py, ../up/a_b.py, so...on; see github.com//org//repo_x",
    "seehttps://x.org/a_b/c.py?q=1; and foo\\nbar_baz\\tqux_quux, (parse_config) [x.y.z]",
    "\ud800 lone surrogate beside path/to/file_name.rs and os.path.join and gpt-4o",
)


@pytest.fixture
def judged(recorded_calls: Callable[[object, str], list[str]]) -> list[str]:
    """Every token `is_distinctive` is asked about, in order (the extractor's judging, counted)."""
    return recorded_calls(extract_module, "is_distinctive")


def _graph(*outputs: str) -> tuple[Graph, list[Call]]:
    graph, calls, parent = Graph(), [], None
    for number, output in enumerate(outputs):
        call = Call(f"n{number}", "user", output=output, predecessor=parent)
        graph, parent = graph.append(call).unwrap(), call.id
        calls.append(call)
    return graph, calls


def test_the_fast_word_runs_are_the_token_patterns_runs() -> None:
    """`ascii_runs` with the extractor's table finds what ``_TOKEN.findall`` finds, non-ASCII and all."""
    for text in (*TEXTS, "", "   ", "ü", "a-b_c.d/e~f@g+h", "x\ty\nz\x00w"):
        assert ascii_runs(text, extract_module._TOKEN_BYTES) == extract_module._TOKEN.findall(text)


def _looked_up(atom: str) -> bool:
    # What `HistoryIndex.positions` is asked for: a token, a word or a URL whole (never a
    # URL's run across its ``://``, which holds a colon no word holds).
    return "://" in atom or re.fullmatch(r"[A-Za-z0-9_./~@+\-]+", atom) is not None


def _expected(texts: tuple[str, ...]) -> dict[str, list[int]]:
    expected: dict[str, list[int]] = {}
    for position, text in enumerate(texts):
        for atom in atoms(text):
            if _looked_up(atom):
                expected.setdefault(atom, []).append(position)
    return expected


def test_the_index_finds_each_text_under_its_atoms() -> None:
    """The texts the index finds for an atom are those `atoms` files it under, word for word."""
    graph, calls = _graph(*TEXTS, *TEXTS)
    index = HistoryIndex()
    for call in calls:
        index.add_call(graph, call)
    expected = _expected((*TEXTS, *TEXTS))
    assert {atom: list(index.positions(atom)) for atom in expected} == expected
    assert {"parse_config", "config.py", "a/b/c.txt", "--dry.run_x", "bar_baz"} <= set(expected)
    # A string inside a word is no atom of it: ``config`` of ``parse_config``, ``arse_co``.
    assert [index.positions(s) for s in ("config", "arse_co", "nbar_baz", "Done")] == [()] * 4


#: What texts are made of where the index could go wrong: separators doubled, escapes, URLs
#: run into words, flags with dots.
_PIECES = st.sampled_from(
    [
        "a", "b_c", "x.py", "-", "--", "-f", ".", "..", "/", "//", "~", "+", "@", "\\n",
        "\\", "n", "http://", "https://h.io/", " ", "\n", ":", "(", "`", "Abc", "9f3e2a1",
        "v1.2.3", "self.", "os.", "src/", "x_y", "ZZ",
    ]
)  # fmt: skip


@given(st.lists(st.lists(_PIECES, max_size=12).map("".join), min_size=1, max_size=4))
def test_the_index_agrees_with_the_extractor_on_any_text(texts: list[str]) -> None:
    """For every atom a text holds, the index finds exactly the texts whose `atoms` hold it."""
    graph, calls = _graph(*texts)
    index = HistoryIndex()
    for call in calls[:2]:
        index.add_call(graph, call)
    index.positions("a_b")  # a lookup in between: the later texts form a second block
    for call in calls[2:]:
        index.add_call(graph, call)
    kept = tuple(text for text in texts if text)
    expected = _expected(kept)
    assert {atom: list(index.positions(atom)) for atom in expected} == expected
    for atom, where in expected.items():
        assert index.first(atom) == where[0]


def test_every_piece_of_an_atom_is_a_piece_of_its_text() -> None:
    """The filter a block is searched through never leaves out a text that holds the atom."""
    for text in TEXTS:
        held = pieces(text)
        for atom in atoms(text):
            if _looked_up(atom):
                assert set(pieces_of(atom)) <= held, atom


def test_only_gaps_between_word_characters_are_read() -> None:
    """An ellipsis, ``../`` and ``https://`` are passed over; ``a//b`` and a flag's ``..`` are not."""
    text = "so... ../up https://x.org a//b_c --x..y_z plain"
    assert [text[left:right] for left, right in gap_regions(text)] == ["a//b_c", "--x..y_z"]


def test_a_lookup_reads_the_words_around_the_string_not_the_history(judged: list[str]) -> None:
    """Work counted: the history's words are judged only where a looked-up string occurs.

    A replay reads every tool result into the history, and most of their words are never
    named again; the index used to judge each distinct word of each text as it entered.
    """
    names = " ".join(f"name_{i:04d} path/to/file_{i}.py" for i in range(300))
    graph, calls = _graph(names, f"{names} parse_config", "unrelated words")
    index = HistoryIndex()
    for call in calls:
        index.add_call(graph, call)
    assert judged == []
    assert index.containing("parse_config") == (1,)
    assert index.containing("name_0007") == (0, 1)
    assert index.containing("missing_name") == ()
    # The strings asked for, and no word of the history besides.
    assert sorted(judged) == ["missing_name", "name_0007", "parse_config"]
    # A string asked for again after a text entered is searched for in that text alone.
    before = index.searched
    later, more = _graph(names, f"{names} parse_config", "unrelated words", "one name_0007")
    index.add_call(later, more[-1])
    assert index.positions("name_0007") == (0, 1, 3)
    assert index.searched - before == len("one name_0007")


def test_plain_words_are_set_aside_without_judging_each(judged: list[str]) -> None:
    """Work counted: words, capitalised words, numbers and short words are never judged one by one.

    Most words of any text are plain; a Python call per plain word was most of the
    extractor's cost. Only the rest is judged, each once.
    """
    plain = "The quick brown Fox jumps over 12345 lazy dogs and a cat by the river bank"
    graph, calls = _graph(plain, f"{plain} parse_config", f"parse_config {plain}")
    index = HistoryIndex()
    for call in calls:
        index.add_call(graph, call)
    assert index.containing("parse_config") == (1, 2)
    assert judged == ["parse_config"]


def test_a_reply_read_before_it_is_indexed_is_judged_the_same_way(judged: list[str]) -> None:
    """The reply path (`TokenMemo.tokens`) sets plain words aside too, and keeps their order."""
    memo = TokenMemo()
    text = "Then edit src/app/main.py and run_all so Some words follow 42 times"
    found = list(memo.tokens((text,)))
    assert found == ["src/app/main.py", "run_all"]
    assert not [t for t in judged if re.fullmatch(r"[A-Z]?[a-z]+|[0-9]+", t)]


class _CountingPattern:
    """A compiled pattern that counts its `findall` calls."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.calls = pattern, 0

    def findall(self, text: str) -> list[str]:
        self.calls += 1
        return self.pattern.findall(text)


def test_patterns_run_only_on_texts_that_can_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """Work counted: spans, error lines and handles are searched for only where a match could be.

    Every match holds a backtick, an error word or ``h:``: a text without one is not read
    by the pattern (a substring test in C instead). The answers are the patterns' own.
    """
    import ctxrules.rules.handles as handles_module  # noqa: PLC0415 - the module patched

    span = _CountingPattern(extract_module._SPAN)
    error = _CountingPattern(extract_module._ERROR_LINE)
    handle = _CountingPattern(handles_module.HANDLE_PATTERN)
    monkeypatch.setattr(extract_module, "_SPAN", span)
    monkeypatch.setattr(extract_module, "_ERROR_LINE", error)
    monkeypatch.setattr(handles_module, "HANDLE_PATTERN", handle)
    plain = "ran the tests in src/app/main.py, all green; see parse_config for why"
    assert extract_module.references(plain) == ("src/app/main.py", "parse_config")
    assert handles_module.handles_in(plain) == ()
    assert (span.calls, error.calls, handle.calls) == (0, 0, 0)
    marked = "call `load_cfg(path, strict=True)` fails:\nValueError: bad key in cfg_file h:abcdefgh"
    assert extract_module.references(marked) == (
        "load_cfg",
        "cfg_file",
        "load_cfg(path, strict=True)",
        "ValueError: bad key in cfg_file h:abcdefgh",
    )
    assert handles_module.handles_in(marked) == ("h:abcdefgh",)
    assert (span.calls, error.calls, handle.calls) == (1, 1, 1)


def test_a_block_searched_often_is_skipped_by_its_pieces(
    recorded_calls: Callable[[object, str], list[str]],
) -> None:
    """Work counted: a block's pieces are read once it was searched `PIECES_AFTER` times.

    From then on a string with a piece the block lacks skips it; a block searched less is
    never read for them (most blocks are searched a few times).
    """
    read = recorded_calls(index_module, "pieces")
    names = " ".join(f"name_{i:04d}" for i in range(200))
    graph, calls = _graph(names)
    index = HistoryIndex()
    index.add_call(graph, calls[0])
    for number in range(index_module.PIECES_AFTER - 1):
        assert index.positions(f"missing_{number}") == ()
    assert (read, index.searched) == ([], (index_module.PIECES_AFTER - 1) * len(names))
    assert index.positions("name_0042") == (0,)
    assert read == [names]
    before = index.searched
    assert index.positions("other_name") == ()
    assert index.searched == before
