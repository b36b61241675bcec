"""The history index reads every text of a replay: the words that are no reference cost no Python step each."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

import ctxrules.fidelity.extract as extract_module
from ctxrules.dag import Call, Graph
from ctxrules.fidelity import HistoryIndex, atoms
from ctxrules.fidelity.extract import TokenMemo
from ctxrules.rules.text import ascii_runs

TEXTS = (
    "The Quick brown fox jumps over 12345 lazy dogs, a b c; Über naïve café 中文 text.",
    "Fixed `parse_config` in src/app/config.py (see 966e0df2); ContextItem HTTP ABcd x.py",
    "see https://example.com/a/b.html. and ./run.sh --no-verify v0.4.3 self.max_chars",
    'an escaped "\\nDone" and a//b//c.txt, /span, ~/notes/x_y.md, +@~plus, 1.5rem 123456ms',
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


def test_the_index_files_each_text_under_its_atoms() -> None:
    """The index's keys for a text are `atoms` of it, the reference reading, word for word."""
    graph, calls = _graph(*TEXTS, *TEXTS)
    index = HistoryIndex()
    for call in calls:
        index.add_call(graph, call)
    expected: dict[str, list[int]] = {}
    for position, text in enumerate((*TEXTS, *TEXTS)):
        for atom in atoms(text):
            expected.setdefault(atom, []).append(position)
    assert index.postings == expected
    assert "parse_config" in index.postings
    assert "config.py" in index.postings


def test_plain_words_are_set_aside_without_judging_each(judged: list[str]) -> None:
    """Work counted: words, capitalised words, numbers and short words are never judged one by one.

    Most words of any text are plain; the index reads every text of the history, so a
    Python call per plain word was most of its cost. Only the rest is judged, each once.
    """
    plain = "The quick brown Fox jumps over 12345 lazy dogs and a cat by the river bank"
    graph, calls = _graph(plain, f"{plain} parse_config", f"parse_config {plain}")
    index = HistoryIndex()
    for call in calls:
        index.add_call(graph, call)
    assert judged == ["parse_config"]
    assert list(index.postings) == ["parse_config"]


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
