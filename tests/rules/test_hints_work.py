"""The hints' cost: `names` reads a text once; the failure line is looked for only where one can be.

Both give exactly what they gave before: the memo answers what `_names` computes, and
`_error_line` finds the match `_ERROR_LINE.search` finds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.dag import Role
from ctxrules.rules import Facts, WorkMeter
from ctxrules.rules import hints as hints_module
from ctxrules.rules.hints import last_written, names, shown_names
from ctxrules.rules.text import one_line
from ctxrules.rules.tool_aging import _stub_body as stub_body
from ctxrules.rules.tool_aging import tool_stub


def test_names_reads_a_text_once_and_answers_a_new_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second call for a text is answered from the memo, equal to the first, never shared."""
    read: list[str] = []
    real = hints_module._names

    def counting(text: str) -> list[str]:
        read.append(text)
        return real(text)

    monkeypatch.setattr(hints_module, "_names", counting)
    text = "run parse_args in src/app/run.py then parse_args via cli.main # names_memo_marker_41"
    first = names(text)
    assert first == ["parse_args", "src/app/run.py", "cli.main", "names_memo_marker_41"]
    first.append("spoiled")
    second = names(text)
    assert second == first[:-1]
    assert second is not first
    assert read == [text]
    # Another text is read anew.
    assert names(text + " other_name") == [*second, "other_name"]
    assert len(read) == 2


def test_a_remembered_answer_is_the_one_worked_out_anew() -> None:
    """For texts of every kind the memo answers what `_names` computes (the function is pure)."""
    texts = ["", "plain words only", "a.b c_d e/f/g.py 0xdeadbeef1 camelCase " * 3, "x" * 300_000]
    for text in texts:
        assert names(text) == hints_module._names(text)
        assert names(text) == hints_module._names(text)


def _names_judging_every_word(text: str) -> list[str]:
    """`_names` as it was, judging every distinct word: the reference the fast path must equal."""
    from collections import Counter  # noqa: PLC0415 - this reference only

    if len(text) > hints_module.READ_CHARS:
        half = hints_module.READ_CHARS // 2
        text = f"{text[:half]}\n{text[-half:]}"
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for raw, seen in Counter(hints_module._CANDIDATE.findall(text)).items():
        word = raw.strip(".-/~")
        if word not in first:
            first[word] = len(first) if hints_module._distinctive(word) else -1
        if first[word] >= 0:
            counts[word] += seen
    return sorted(counts, key=lambda w: (-counts[w], first[w]))


WORDY = [
    "The quick brown Fox jumps over 12345 lazy dogs: parse_config, then Parse_config.",
    "Hello. Hello- hello/ ~hello deadbeef Deadbeef facade1 acceded a.b c_d ABcd ab12cd34ef",
    "src/app/run.py ./x.py -flag --long-flag v1.2.3 os.path.join HTTPServer xml2json" * 3,
    "a b c ab abc abcd Abcd ABCD 0 00 000 0000 __init__ _x_ x.y.z ..dots.. ~/home/u/f.txt",
    "中文 naïve café word_word\nNext tail-end... cli.main cli.main CLI.main",
]


def test_plain_words_are_never_judged_one_by_one(
    recorded_calls: Callable[[object, str], list[Any]],
) -> None:
    """Counted: words, capitalised words and numbers are set aside in one pass, never judged.

    Most words of any text are plain, and a cold replay reads the names of every result it
    ages: a Python call per plain word was most of the aging rule's time.
    """
    judged: list[str] = recorded_calls(hints_module, "_distinctive")
    text = "The quick brown Fox jumps over 12345 lazy dogs and then parse_config # plain_marker_7"
    assert hints_module._names(text) == ["parse_config", "plain_marker_7"]
    assert judged == ["parse_config", "plain_marker_7"]


def test_setting_plain_words_aside_changes_no_answer() -> None:
    """For texts mixing every kind of word the names and their order are the full judging's."""
    for text in [*WORDY, " ".join(WORDY), "x" * 300_000, ""]:
        assert hints_module._names(text) == _names_judging_every_word(text)


#: Pieces that make failure lines and near misses: the words, "E", white space of every
#: kind, colons, brackets, and letters that match others regardless of case (the Kelvin
#: sign, the long s, the dotless i, the dotted I).
PIECES = st.sampled_from(
    [
        "error",
        "Error:",
        "ERROR",
        "exception",
        "failed",
        "FAIL",
        "fatal",
        "panic",
        "Traceback",
        "not found",
        "Permission denied",
        "no such file",
        "E",
        "e",
        "E ",
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\x0b",
        "\x1c",
        "\u2028",
        "\xa0",
        ":",
        ": x",
        "[E0425]",
        "[]",
        "x",
        "ok",
        "value",
        "\u212a",
        "\u017f",
        "\u0131",
        "\u0130",
        "errors",
        "_error",
        "err",
        "or",
        "not",
        " found",
    ]
)


@given(st.lists(PIECES, max_size=40).map("".join))
@example("E\n\n  failed here")
@example("ok\n  \n E \n error: x\nmore")
@example("value error\n:  y")
@example("line error:\n  next")
@example("a\ne\ne\nerror")
def test_the_failure_line_is_the_one_the_pattern_finds(text: str) -> None:
    """`_error_line` gives the very match of ``_ERROR_LINE.search``: start, end and text."""
    found = hints_module._error_line(text)
    expected = hints_module._ERROR_LINE.search(text)
    if expected is None:
        assert found is None
    else:
        assert found is not None
        assert (found.span(), found.group()) == (expected.span(), expected.group())


def test_lines_without_a_failure_word_are_not_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted: of 2,000 lines, the pattern is tried on the one holding a failure report only."""
    tried: list[int] = []
    real = hints_module._ERROR_LINE

    class Counting:
        def match(self, text: str, pos: int) -> object:
            tried.append(pos)
            return real.match(text, pos)

    monkeypatch.setattr(hints_module, "_ERROR_LINE", Counting())
    lines = [f"line {n} of parse_args output" for n in range(2_000)]
    lines[700] = "checking ValueError handling"
    lines[1500] = "ValueError: bad input"
    text = "\n".join(lines)
    found = hints_module._error_line(text)
    assert found is not None
    assert found.group() == "ValueError: bad input"
    assert tried == [text.index("ValueError: bad")]


def _said_items(count: int) -> list[ContextItem]:
    """Assistant replies and edit calls naming files, some summarized, over ``count`` positions."""
    items = []
    for n in range(count):
        state = "summarized" if n % 3 == 0 else "full"
        if n % 2:
            items.append(
                ContextItem(f"a{n}", "assistant", state=state, rendered=f"open mod_{n % 7}.py now")
            )
        else:
            arguments = f'{{"path": "src/mod_{n % 5}.py", "old": "load_cfg_{n % 4}"}}'
            items.append(
                ContextItem(f"t{n}", "tool", state=state, rendered="ok", tool_name="edit",
                            tool_call_id=f"c{n}", arguments=arguments)
            )  # fmt: skip
    return items


def _reference_last(items: list[ContextItem], start: int) -> dict[str, int]:
    last: dict[str, int] = {}
    for index in range(start, len(items)):
        item = items[index]
        if item.role is Role.ASSISTANT and item.state is not State.SUMMARY:
            last.update(dict.fromkeys(names(item.rendered), index))
        elif item.is_tool and item.arguments:
            last.update(dict.fromkeys(names(item.arguments), index))
    return last


@pytest.mark.parametrize("start", [0, 1, 63, 64, 100, 199])
def test_batch_point_readers_read_each_whole_chunk_once(
    monkeypatch: pytest.MonkeyPatch, start: int
) -> None:
    """Work counted: a whole chunk's names are read once and kept with it; answers as item by item.

    `last_written` and `shown_names` run at every batch point from the rule's mark, which
    stays behind a held result while the summarized history piles up after it.
    """
    items = _said_items(200)
    commit = ContextCommit("s").with_items(items)
    facts = Facts()
    expected_shown = frozenset(
        name
        for item in items[start:]
        if item.role in {Role.USER, Role.ASSISTANT} and item.state is State.FULL
        for name in names(item.rendered)
    )
    assert last_written(commit, start, facts) == _reference_last(items, start)
    assert shown_names(commit, start, facts) == expected_shown
    read: list[str] = []
    real = hints_module.item_names

    def counting(item: ContextItem, *, arguments: bool = False) -> tuple[str, ...]:
        read.append(item.source_node_id)
        return real(item, arguments=arguments)

    monkeypatch.setattr(hints_module, "item_names", counting)
    assert last_written(commit, start, facts) == _reference_last(items, start)
    assert shown_names(commit, start, facts) == expected_shown
    # Only the partial chunk the mark falls in is read item by item again.
    assert len(read) <= 2 * (-start % 64)


def test_names_in_view_skip_the_chunks_a_summary_covers() -> None:
    """Work counted: 4,000 summarized messages show nothing, and their whole chunks go unread."""
    old = [
        ContextItem(f"s{n}", "assistant", state="summarized", rendered=f"see old_mod_{n}.py")
        for n in range(4_000)
    ]
    recent = [ContextItem(f"a{n}", "assistant", rendered=f"now new_mod_{n}.py") for n in range(10)]
    commit = ContextCommit("s").with_items([*old, *recent])
    meter = WorkMeter()
    shown = shown_names(commit, 0, Facts(meter=meter))
    assert shown == frozenset(f"new_mod_{n}.py" for n in range(10))
    # The chunk the summary ends in is read whole (its answer is kept with it): 4,000 is
    # 62 chunks and 32 items; 4,000 were read before.
    assert meter.items_visited == 4_010 - 62 * 64


def test_a_pending_stub_reads_its_failure_line_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A result stubbed again with other names in view (the next declined point) reads its text once."""
    read: list[str] = []
    real = hints_module._error_line

    def counting(text: str) -> Any:
        read.append(text)
        return real(text)

    monkeypatch.setattr(hints_module, "_error_line", counting)
    text = "ok load_config\nValueError: bad pending_marker_77 value\n" + "row parse_args\n" * 40
    item = ContextItem("t1", "tool", rendered=text, tool_name="cat")
    stubs = [
        tool_stub(item, 0, 0, hint_chars=120, seen=frozenset(seen))
        for seen in ((), ("load_config",), ("load_config", "parse_args"))
    ]
    assert all("| names: ValueError: bad pending_marker_77 value, " in stub for stub in stubs)
    assert stubs[0] != stubs[2]
    assert read == [text]


@given(
    text=st.text(alphabet="ab \n\tc", max_size=1_400),
    head=st.integers(0, 700),
    tail=st.integers(0, 700),
)
@settings(max_examples=300, deadline=None)
def test_a_stubs_kept_ends_give_the_body_of_the_whole_text(text: str, head: int, tail: int) -> None:
    """The ends an item keeps give the stub body `one_line` of its whole text gives, at any size."""
    line = one_line(text)
    short = len(line) <= head + tail
    expected = line if short else f"{line[:head]}… {line[len(line) - tail :]}"
    item = ContextItem("t", "tool", rendered=text, tool_name="cat")
    for _ in range(2):  # the first reads the text, the second the kept ends
        assert stub_body(item, head, tail) == (expected, short)
    kept = item.memo["one_line_ends"] if item.memo else None
    assert isinstance(kept, tuple)
    assert len(kept[1]) <= 512
    assert len(kept[2]) <= 512
