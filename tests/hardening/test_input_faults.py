"""Bad input found by fuzzing (issue 16): each reproducer ends in a located Failure or a working request."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from returns.result import Failure, Success

from ctxrules.dag import graph_to_jsonl
from ctxrules.engine import DefaultContextEngine
from ctxrules.importers import import_text
from ctxrules.spec import load_spec
from ctxrules.store import SqliteStore
from ctxrules.tokens import HeuristicCounter

SURROGATE_LOG = '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"content":"hi \\ud800"}}\n{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","content":[{"type":"text","text":"ok \\udfff"}]}}'


def _line(**fields: object) -> str:
    record = {"type": "user", "uuid": "u2", "parentUuid": "u1", "message": {"content": "x"}}
    record.update(fields)
    return json.dumps(record)


GOOD = '{"type":"user","uuid":"u1","parentUuid":null,"message":{"content":"hi"}}'


def test_lone_surrogates_pass_every_layer(tmp_path: Path) -> None:
    """Fault 5: a log with lone surrogates imports, prepares, stores, exports and is searchable."""
    session = import_text(SURROGATE_LOG).unwrap().session
    prep = DefaultContextEngine(tokenizer=HeuristicCounter()).prepare(session, window=8_000)
    for message in prep.unwrap().messages:
        for block in message.blocks:
            str(getattr(block, "text", "")).encode()
    graph_to_jsonl(session.graph).encode()
    with SqliteStore.open(tmp_path / "s.sqlite").unwrap() as store:
        store.save_session(session).unwrap()
        assert store.search("hi").unwrap()
        store.export_jsonl(session.session_id).unwrap().encode()


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (
            '{"type":"user","uuid":"u2","parentUuid":"u1","message":{"content":'
            + "[" * 900
            + "]" * 900
            + "}}",
            "nested",
        ),
        (
            '{"type":"user","uuid":"u2","parentUuid":"u1","x":' + "[" * 900 + "]" * 900 + "}",
            "nested",
        ),
        (_line(timestamp=int("9" * 400)), "64 bits"),
        (
            '{"type":"user","uuid":"u2","parentUuid":"u1","meta":1e999,"message":{"content":"x"}}',
            "too large",
        ),
        (
            '{"type":"user","uuid":"u2","parentUuid":"u1","meta":NaN,"message":{"content":"x"}}',
            "NaN",
        ),
        (
            '{"type":"user","uuid":"u2","parentUuid":"u1","timestamp":Infinity,"message":{"content":"x"}}',
            "Infinity",
        ),
    ],
)
def test_one_bad_value_is_one_bad_line(bad: str, reason: str) -> None:
    """Fault 6: a bad value fails its own line (with the number), and skip_bad goes past it."""
    text = f"{GOOD}\n{bad}"
    failed = import_text(text)
    assert isinstance(failed, Failure)
    assert failed.failure().line == 2
    assert reason in failed.failure().reason
    skipped = import_text(text, skip_bad=True).unwrap()
    assert [bad.line for bad in skipped.stats.bad_records] == [2]
    assert skipped.session.head == "u1"


def test_nan_inside_a_json_document_names_its_line() -> None:
    """Fault 6: NaN in a JSON document (not lines) fails with the line it is on."""
    document = '[\n{"role": "user", "content": "hi"},\n{"role": "user", "content": NaN}\n]'
    failed = import_text(document, format="openai-chat")
    assert isinstance(failed, Failure)
    assert failed.failure().line == 3


def test_an_infinite_created_at_cannot_get_in() -> None:
    """Fault 6: a created_at of 1e999 is refused on import, so nothing exports 'Infinity'."""
    record = '{"id":"u1","role":"user","seq":0,"created_at":1e999,"caller":null,"predecessor":null,"input":null,"output":"x","metadata":{},"reads":[],"name":"","status":"done"}'
    result = import_text(record, format="ctxrules-jsonl", skip_bad=True)
    exported = graph_to_jsonl(result.unwrap().session.graph) if isinstance(result, Success) else ""
    assert "Infinity" not in exported


def _damage(path: Path, table: str) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA ignore_check_constraints = ON")
        triggers = conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()
        for (name,) in triggers:
            conn.execute(f"DROP TRIGGER {name}")
        # Indexes on the JSON's fields refuse a malformed row too: damage is what SQL
        # would not write, so they go as well (the reads must not need them).
        indexes = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE '%json_extract%'"
        ).fetchall()
        for (name,) in indexes:
            conn.execute(f"DROP INDEX {name}")
        conn.execute(f"UPDATE {table} SET data = '{{\"broken\": ' ")  # noqa: S608 - test constant


@pytest.mark.parametrize("table", ["nodes", "commits"])
def test_a_damaged_row_is_a_corrupt_record(tmp_path: Path, table: str) -> None:
    """Fault 9: a damaged row gives CorruptRecord Failures from every read, never JSONDecodeError."""
    session = import_text(SURROGATE_LOG).unwrap().session
    engine = DefaultContextEngine(tokenizer=HeuristicCounter())
    commit = engine.prepare(session, window=8_000).unwrap().commit
    path = tmp_path / "s.sqlite"
    with SqliteStore.open(path).unwrap() as store:
        store.save_session(session, commits=[commit]).unwrap()
    _damage(path, table)
    with SqliteStore.open(path).unwrap() as store:
        results = [
            store.load_graph("s"),
            store.load_session("s"),
            store.export_jsonl("s"),
            store.commits_for("s"),
            store.get_commit(commit.id),
        ]
    failures = [r.failure() for r in results if isinstance(r, Failure)]
    assert failures
    assert all(type(f).__name__ == "CorruptRecord" for f in failures), failures


def test_opening_to_look_writes_nothing(tmp_path: Path) -> None:
    """Fault 9: a read-only open leaves an empty file empty and refuses it."""
    empty = tmp_path / "e.jsonl"
    empty.touch()
    opened = SqliteStore.open(empty, read_only=True)
    assert isinstance(opened, Failure)
    assert "empty" in str(opened.failure())
    assert empty.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.jsonl"]


def test_a_store_in_a_read_only_folder_can_be_read(tmp_path: Path) -> None:
    """Fault 9: a store whose folder cannot be written is opened read-only and read."""
    folder = tmp_path / "ro"
    folder.mkdir()
    session = import_text(SURROGATE_LOG).unwrap().session
    with SqliteStore.open(folder / "s.sqlite").unwrap() as store:
        store.save_session(session).unwrap()
    before = sorted(p.name for p in folder.iterdir())
    folder.chmod(0o555)
    try:
        with SqliteStore.open(folder / "s.sqlite", read_only=True).unwrap() as store:
            assert store.load_graph("s").unwrap() == session.graph
            # Nothing is created beside the store (root could write here; the listing shows it).
            assert sorted(p.name for p in folder.iterdir()) == before
    finally:
        folder.chmod(0o755)


def test_search_finds_text_after_a_nul(tmp_path: Path) -> None:
    """Fault 9: the full-text index holds the text after a NUL."""
    text = '{"type":"user","uuid":"u1","parentUuid":null,"message":{"content":"before\\u0000 zebrafish"}}'
    session = import_text(text).unwrap().session
    with SqliteStore.open(tmp_path / "s.sqlite").unwrap() as store:
        store.save_session(session).unwrap()
        assert [hit.node_id for hit in store.search("zebrafish").unwrap()] == ["u1"]


@pytest.mark.parametrize(
    ("spec", "where"),
    [
        (
            '[[rules]]\nuse = "cap_tool_result"\nparams = { max_chars = ' + "9" * 5_000 + " }",
            "line 3",
        ),
        ("x = " + "[" * 1_000 + "]" * 1_000, "line 1"),
        (
            '[[rules]]\nuse = "cap_tool_result"\nparams = { a = ' + "[" * 150 + "]" * 150 + " }",
            "line 3",
        ),
    ],
)
def test_spec_extremes_fail_with_a_location(spec: str, where: str) -> None:
    """Fault 10: huge integers and deep nesting are spec errors with a location, not internal faults."""
    failed = load_spec(spec)
    assert isinstance(failed, Failure)
    text = str(failed.failure())
    assert where in text
    assert "internal" not in text


def test_a_spec_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    """Fault 10: a spec saved with a UTF-8 BOM loads like the same spec without it."""
    path = tmp_path / "bom.toml"
    path.write_bytes(b'\xef\xbb\xbf[[rules]]\nuse = "cap_tool_result"\n')
    assert [r.name for r in load_spec(path).unwrap().rules] == ["cap_tool_result"]


def test_a_catastrophic_pattern_runs_in_linear_time() -> None:
    """Fault 10: matches = "^(a+)+$" against 26 a's and '!' answers at once (RE2, no backtracking)."""
    spec = '[[rules]]\nname = "r"\nwhen = { tool_name = { matches = "^(a+)+$" } }\nthen = { state = "cleared" }'
    predicate = load_spec(spec).unwrap()
    assert predicate.rules
    from ctxrules.spec.pattern import compile_pattern  # noqa: PLC0415 - the unit under test

    pattern = compile_pattern("^(a+)+$")
    assert not isinstance(pattern, str)
    start = time.perf_counter()
    assert pattern.search("a" * 5_000 + "!") is None
    assert time.perf_counter() - start < 1.0
