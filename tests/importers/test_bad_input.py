"""Bad input is a Failure with a pinned message and location; what was read before it is kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxrules.importers import BadRecord, ImportFailure, import_session, import_text

U1 = '{"type": "user", "uuid": "u1", "parentUuid": null, "message": {"content": "hi"}}'
A1 = (
    '{"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {"id": "m1", '
    '"content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]}}'
)
UNKNOWN_RESULT = (
    '{"type": "user", "uuid": "r1", "parentUuid": "u1", "message": {"content": '
    '[{"type": "tool_result", "tool_use_id": "nope", "content": "x"}]}}'
)


def _jsonl(*lines: str) -> str:
    return "\n".join(lines)


FORMATS = "['claude-code', 'openai-chat', 'langchain', 'ctxrules-jsonl']"

#: name, text, keyword arguments, the failure's message, the partial graph's node ids (None: no partial).
CASES: list[tuple[str, Any, dict[str, Any], str, list[str] | None]] = [
    (
        "truncated JSON line",
        U1 + '\n{"type": "user", "uuid": "u2", "parentUuid": "u1", "mess',
        {},
        "<text>: line 2: invalid JSON at column 52: Unterminated string starting at",
        ["u1"],
    ),
    (
        "non-object record",
        U1 + "\n[1, 2]\n",
        {},
        "<text>: line 2: expected a JSON object, found a list",
        ["u1"],
    ),
    (
        "tool_result for an unknown tool_use",
        U1 + "\n" + UNKNOWN_RESULT,
        {},
        "<text>: line 2: tool_result for unknown tool call id 'nope'",
        ["u1"],
    ),
    (
        "second tool_result for one tool_use",
        _jsonl(
            U1,
            A1,
            UNKNOWN_RESULT.replace("nope", "t1"),
            UNKNOWN_RESULT.replace("nope", "t1").replace("r1", "r2"),
        ),
        {},
        "<text>: line 4: second tool_result for tool call id 't1'",
        ["u1", "a1", "tool:t1"],
    ),
    (
        "duplicate uuid",
        U1 + "\n" + U1,
        {},
        "<text>: line 2: duplicate uuid 'u1'",
        ["u1"],
    ),
    (
        "NaN in a record",
        U1 + '\n{"type": "progress", "x": NaN}',
        {},
        "<text>: line 2: invalid JSON: NaN is not a JSON value",
        ["u1"],
    ),
    (
        "record without a type",
        '{"uuid": "u1"}\n',
        {"format": "claude-code"},
        "<text>: line 1: type: expected a string, found null",
        [],
    ),
    (
        "user record without a uuid",
        '{"type": "user", "parentUuid": null, "message": {"content": "x"}}',
        {"format": "claude-code"},
        "<text>: line 1: uuid: missing (every 'user' record needs one)",
        [],
    ),
    (
        "unknown format",
        "hello world\n",
        {},
        (
            "<text>: cannot detect the format: line 1 is not JSON (invalid JSON at column 1: "
            f"Expecting value); pass format= one of {FORMATS}"
        ),
        None,
    ),
    (
        "JSON of an unknown shape",
        '{"a": 1}',
        {},
        (
            "<text>: cannot detect the format: the text is JSON but not a known log: an object "
            f"with keys ['a']; pass format= one of {FORMATS}"
        ),
        None,
    ),
    (
        "misspelt format name",
        U1,
        {"format": "claude"},
        f"<text>: format='claude': expected one of {FORMATS} (did you mean 'claude-code'?)",
        None,
    ),
    ("empty file", "", {}, "<text>: empty input: nothing to import", None),
    ("blank lines only", " \n\n", {}, "<text>: empty input: nothing to import", None),
    (
        "truncated JSON document",
        '{"messages": [{"role": "user",\n',
        {"format": "openai-chat"},
        "<text>: line 2: invalid JSON at column 1: Expecting property name enclosed in double quotes",
        None,
    ),
    (
        "JSON document without messages",
        '{"a": 1}',
        {"format": "openai-chat"},
        (
            "<text>: expected a list of messages or an object with a 'messages' list, "
            "found an object with keys ['a']"
        ),
        None,
    ),
    (
        "tool message for an unknown call",
        '[{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "zz", "content": "x"}]',
        {},
        "<text>: message 2: tool message for unknown tool call id 'zz'",
        ["m1"],
    ),
    (
        "LangChain message that is not an object",
        "[1]",
        {"format": "langchain"},
        "<text>: message 1: expected a message object, found 1",
        [],
    ),
    (
        "ctxrules-jsonl node with an unknown predecessor",
        '{"id": "n1", "role": "user"}\n{"id": "n2", "role": "assistant", "predecessor": "ghost"}\n',
        {},
        "<text>: line 2: unknown node 'ghost' given as predecessor",
        ["n1"],
    ),
    (
        "bytes instead of text",
        b"abc",
        {},
        "<text>: text: expected a str, found bytes (decode bytes as UTF-8 first)",
        None,
    ),
    (
        "skip_bad not a bool",
        U1,
        {"skip_bad": 1},
        "<text>: skip_bad=1: expected True or False",
        None,
    ),
]


@pytest.mark.parametrize(
    ("text", "kwargs", "message", "partial"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_bad_input_fails_with_pinned_message(
    text: Any, kwargs: dict[str, Any], message: str, partial: list[str] | None
) -> None:
    """Each bad input is a Failure whose text names source, location and fault; partial keeps what was read."""
    failure = import_text(text, **kwargs).failure()
    assert isinstance(failure, ImportFailure)
    assert str(failure) == message
    if partial is None:
        assert failure.partial is None
    else:
        assert failure.partial is not None
        assert list(failure.partial.session.graph.order) == partial
        assert failure.partial.stats.bad_records[-1].line == failure.line


def test_skip_bad_goes_on_and_reports_every_bad_record() -> None:
    """With skip_bad the import succeeds; bad records are listed and later records still link up."""
    text = _jsonl(
        U1,
        "{oops",
        A1,
        '{"type": "user", "uuid": "x1", "parentUuid": "a1", "message": 5}',
        UNKNOWN_RESULT.replace('"u1"', '"x1"'),
        '{"type": "user", "uuid": "u2", "parentUuid": "r1", "message": {"content": "ok"}}',
    )
    result = import_text(text, format="claude-code", skip_bad=True).unwrap()
    assert result.stats.bad_records == (
        BadRecord(2, "invalid JSON at column 2: Expecting property name enclosed in double quotes"),
        BadRecord(4, "message: expected an object, found 5"),
        BadRecord(5, "tool_result for unknown tool call id 'nope'"),
    )
    graph = result.session.graph
    assert list(graph.order) == ["u1", "a1", "tool:t1", "u2"]
    # u2's parent r1 and r1's parent x1 were bad; u2 still reaches a1 through them.
    assert (graph.nodes["a1"].predecessor, graph.nodes["u2"].predecessor) == ("u1", "a1")
    assert result.session.head == "u2"
    assert result.stats.unanswered_tool_calls == 1


def test_skip_bad_in_ctxrules_jsonl_keeps_later_seqs() -> None:
    """A skipped line leaves a gap in recorded seqs that later lines may keep."""
    text = _jsonl(
        '{"id": "n1", "role": "user", "seq": 0}',
        '{"id": "n2", "role": "bogus", "seq": 1}',
        '{"id": "n3", "role": "user", "seq": 2}',
    )
    result = import_text(text, skip_bad=True).unwrap()
    assert list(result.session.graph.order) == ["n1", "n3"]
    assert [b.line for b in result.stats.bad_records] == [2]


def test_import_session_reports_unreadable_files(tmp_path: Path) -> None:
    """A missing file, a directory and a non-UTF-8 file are Failures that name the path."""
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"a": "\xe9"}\n')
    missing = tmp_path / "missing.jsonl"
    assert str(import_session(missing).failure()) == (
        f"{missing}: cannot read the file: No such file or directory"
    )
    assert (
        str(import_session(tmp_path).failure())
        == f"{tmp_path}: cannot read the file: Is a directory"
    )
    assert (
        str(import_session(latin).failure())
        == f"{latin}: not UTF-8 text: invalid continuation byte at byte 7"
    )


def test_import_session_names_the_file_in_a_bad_record(tmp_path: Path) -> None:
    """A bad record in a file is reported as ``path: line N: reason``."""
    path = tmp_path / "t.jsonl"
    path.write_text(U1 + "\n[1]\n", encoding="utf-8")
    assert (
        str(import_session(path).failure())
        == f"{path}: line 2: expected a JSON object, found a list"
    )


def test_skip_bad_in_a_message_list_reports_message_numbers() -> None:
    """In a JSON document, skipped messages are reported by their 1-based position."""
    text = '[{"role": "user", "content": "hi"}, 7, {"role": "tool", "tool_call_id": "x"}]'
    result = import_text(text, skip_bad=True).unwrap()
    assert [str(bad) for bad in result.stats.bad_records] == [
        "message 2: expected a message object, found 7",
        "message 3: tool message for unknown tool call id 'x'",
    ]
    assert list(result.session.graph.order) == ["m1"]
