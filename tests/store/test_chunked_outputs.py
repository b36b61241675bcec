"""Schema step 5: huge outputs stored in pieces beside their rows, the index written from Python.

A 50 MB output in a node row made SQLite copy the row in the append-only and index
triggers and in the bound value, the record and the JSON check (~720 MB of growth for
one completion). Now an output longer than a piece goes to ``node_chunks`` and the index
text is computed from the record the writer holds, character for character what the
dropped triggers computed: a store of version 4 upgrades and answers every search as before.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from old_schema import old_store

from ctxrules.canonical import canonical_json
from ctxrules.dag import Call, Session, call_to_json
from ctxrules.importers import import_session
from ctxrules.store import SqliteStore, open_store
from ctxrules.store.chunks import OUTPUT_CHUNK, joined_output, output_pieces
from ctxrules.store.fts5 import KIND_FIELDS, _snippets
from ctxrules.store.index_text import INDEXED_CHARS, index_text
from ctxrules.store.rows import SqliteRows
from ctxrules.store.schema import (
    NODE_FIELDS,
    OUTPUT_FIELDS,
    SCHEMA_VERSION,
    indexed_text_of,
)
from ctxrules.store.search import SearchHit, best_hits

BUNDLED = Path(__file__).resolve().parents[2] / "ctxrules" / "data" / "sessions"

# Text that stresses the index's reading of JSON: NULs, backslashes before "u0000",
# quotes, control characters, accents and characters outside the BMP.
_CHARS = st.sampled_from(["\x00", "\\", "u", "0", "2", " ", '"', "\n", "\x01", "é", "😀", "a", "Z"])
_TEXT = st.text(_CHARS, max_size=30)
_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT
)
_JSON = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)


def _sql_text(record: dict[str, Any], fields: tuple[str, ...]) -> str:
    # What schema step 4's triggers indexed: the SQL, run on the record as stored.
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (data TEXT)")
    conn.execute("INSERT INTO t VALUES (?)", (canonical_json(record),))
    (text,) = conn.execute(f"SELECT {indexed_text_of('t', *fields)} FROM t").fetchone()  # noqa: S608 - constants
    conn.close()
    return str(text or "")


@settings(deadline=None)
@given(name=_TEXT, given_input=_JSON, output=_JSON, absent=st.sampled_from(["", "input", "output"]))
@example(name="", given_input=None, output="", absent="")
@example(name=" x", given_input={"k": "\\u0000"}, output=2**70, absent="")
@example(name="n", given_input=0.1 + 0.2, output=[1e300, -0.0, True], absent="")
def test_the_index_text_is_what_the_triggers_computed(
    name: str, given_input: object, output: object, absent: str
) -> None:
    """Python's index text equals the dropped triggers' SQL on any record (search unchanged)."""
    record: dict[str, Any] = {"name": name, "input": given_input, "output": output}
    record.pop(absent, None)
    for fields in (NODE_FIELDS, OUTPUT_FIELDS, KIND_FIELDS[2]):
        assert index_text(record, fields) == _sql_text(record, fields)


@pytest.mark.parametrize("at", [-7, -6, -5, -4, -3, -2, -1, 0, 1])
@pytest.mark.parametrize("pattern", ["\\u0000", "\x00", "\\\\u0000"])
def test_the_index_text_is_cut_where_the_triggers_cut_it(at: int, pattern: str) -> None:
    """At the 100,000-character cut, a NUL or a backslash-u0000 text reads as the SQL read it."""
    text = "a" * (INDEXED_CHARS + at) + pattern + "b" * 10
    for record in ({"output": text}, {"output": {"k": text}}, {"name": "x" * 5, "output": text}):
        assert index_text(record, OUTPUT_FIELDS) == _sql_text(record, OUTPUT_FIELDS)


@settings(deadline=None)
@given(output=_JSON, size=st.integers(1, 7))
def test_pieces_join_to_the_canonical_json(output: object, size: int) -> None:
    """Invariant 1 (content never changes): an output in pieces reads back as it was."""
    pieces = list(output_pieces(output, size))
    assert "".join(pieces) == canonical_json(output)
    assert all(pieces)
    assert joined_output(pieces) == output
    if isinstance(output, str):
        assert len(pieces) == max(1, -(-len(output) // size))


def _huge_session(big: object = None) -> tuple[Session, str, str]:
    session = (
        Session("s")
        .send("user", "build it")
        .bind(lambda s: s.record_call(s.head, "make", {"target": "all"}, status="running"))
        .bind(lambda s: s.record_call(s.head, "cat", {"path": "big.json"}, big))
    ).unwrap()
    return session, session.graph.order[1], session.graph.order[2]


def _pieces(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    found = dict(conn.execute("SELECT node_id, count(*) FROM node_chunks GROUP BY node_id"))
    conn.close()
    return found


def test_a_huge_output_is_stored_in_pieces_and_loads_back_whole(db_path: Path) -> None:
    """Invariant 1: a 2.5 MB text (completed) and a 1.2 MB object (stored whole) read back equal."""
    text = "headword\x00 " + "é\\u0000 line\n" * 190_000 + "tailword"
    big = {"rows": ["r" * 100] * 12_000, "tail": "objword"}
    session, running, whole = _huge_session(big)
    with SqliteStore.open(db_path).unwrap() as store:
        store.save_session(session).unwrap()
        store.complete_node("s", running, text).unwrap()
        graph = store.load_graph("s").unwrap()
        assert graph.nodes[running].output_value() == text
        assert graph.nodes[whole].output_value() == big
        assert graph == session.complete(running, text).unwrap().graph
        assert [h.node_id for h in store.search("headword").unwrap()] == [running]
        assert [h.node_id for h in store.search("objword").unwrap()] == []  # past the head
        assert [h.node_id for h in store.search("rrrr*").unwrap()] == [whole]
        assert store.search("tailword").unwrap() == []
        # Storing the same graph again is a no-op (the stored node reads back equal).
        store.save_session(session.complete(running, text).unwrap()).unwrap()
    assert _pieces(db_path) == {running: 3, whole: 2}
    conn = sqlite3.connect(db_path)
    longest = conn.execute("SELECT max(length(data)) FROM nodes").fetchone()[0]
    assert longest < 1_000
    conn.close()
    assert len(text) > 2 * OUTPUT_CHUNK


def _raw(path: Path, sql: str, *params: object) -> str:
    conn = sqlite3.connect(path)
    try:
        conn.execute(sql, params)
        conn.commit()
    except sqlite3.DatabaseError as err:
        return str(err)
    finally:
        conn.close()
    return "ok"


def test_raw_sql_cannot_change_a_stored_output_in_pieces(db_path: Path) -> None:
    """Pieces never change, a completed node gets no more, and a row counts its pieces."""
    session, running, _ = _huge_session()
    with SqliteStore.open(db_path).unwrap() as store:
        store.save_session(session).unwrap()
        store.complete_node("s", running, "x" * (OUTPUT_CHUNK + 5)).unwrap()
        before = store.load_graph("s").unwrap()
    never = "nodes are append-only: a stored output never changes"
    assert _raw(db_path, "UPDATE node_chunks SET text = '\"forged\"'") == never
    assert _raw(db_path, "DELETE FROM node_chunks") == never
    add = "INSERT INTO node_chunks (session_id, node_id, n, text) VALUES ('s', ?, ?, 'x')"
    assert _raw(db_path, add, running, 2) == never
    assert _raw(db_path, add, running, 0) == never
    assert _raw(db_path, "UPDATE nodes SET chunks = 0") == (
        "nodes are append-only: only a running node is completed, once"
    )
    assert (
        _raw(
            db_path,
            "INSERT INTO nodes (session_id, id, seq, role, data, chunks) VALUES ('s', 'z', 9, 'user', '{}', 1)",
        )
        == "nodes: chunks must count the pieces of the output stored before"
    )
    with open_store(db_path, read_only=True).unwrap() as store:
        assert store.load_graph("s").unwrap() == before


# -- a store of version 4 upgrades -------------------------------------------------------------

QUERIES = (
    "error",
    "test*",
    "file NOT test",
    "path",
    "the",
    "git OR cli",
    "nul*",
    "odd",
    '"u0020 after"',
    "head",
    "42",
)


def _odd_session() -> Session:
    # What the index reads awkwardly: NULs, "\u0000" as text, numbers, nested JSON, a long head.
    long = "head " + "odd words here " * 8_000 + " tailword"
    return (
        Session("odd")
        .send("user", "nul\x00 between and odd \\u0000 after, 😀 é")
        .bind(lambda s: s.record_call(s.head, "calc", {"odd": [1.5, True, None]}, 42))
        .bind(lambda s: s.record_call(s.head, "cat", {"path": "nul\x00.txt"}, {"k": "odd\x00"}))
        .bind(lambda s: s.record_call(s.head, "bash", {"cmd": "yes"}, long))
        .bind(lambda s: s.record_call(s.head, "wait", "odd input", status="running"))
    ).unwrap()


def _old_search(conn: sqlite3.Connection, query: str) -> list[tuple[str, int, str, float]]:
    # Schema step 4's search: the hits' text read back by SQL (the module's query before
    # step 5), snippets cut by the same code.
    case = (
        f"CASE r.kind WHEN 1 THEN {indexed_text_of('n', *OUTPUT_FIELDS)} "
        f"WHEN 2 THEN {indexed_text_of('n', *KIND_FIELDS[2])} "
        f"ELSE {indexed_text_of('n', *NODE_FIELDS)} END"
    )
    sql = (
        f"SELECT n.session_id, n.id, n.seq, n.role, f.rank, f.rowid, {case} "  # noqa: S608 - constants
        "FROM nodes_fts AS f JOIN nodes_fts_rows AS r ON r.id = f.rowid "
        "JOIN nodes AS n ON n.session_id = r.session_id AND n.id = r.node_id "
        "WHERE nodes_fts MATCH ? ORDER BY f.rank, n.session_id, n.seq LIMIT 20"
    )
    found = conn.execute(sql, (query,)).fetchall()
    cut = _snippets(SqliteRows(conn), query, {int(row[5]): str(row[6] or "") for row in found})
    hits = (SearchHit(s, n, q, r, cut.get(int(w), ""), float(k)) for s, n, q, r, k, w, _ in found)
    return [(h.node_id, h.seq, h.snippet, h.rank) for h in best_hits(hits, 10)]


def _version_4_store(path: Path) -> dict[str, Session]:
    sessions = {}
    for number, log in enumerate(sorted(BUNDLED.glob("*.jsonl"))):
        sessions[f"s{number}"] = import_session(log).unwrap().session
    sessions["odd"] = _odd_session()
    conn = old_store(path, 4)
    for sid, session in sessions.items():
        conn.execute("INSERT INTO sessions (id, created_at) VALUES (?, 0)", (sid,))
        for node_id in session.graph.order:
            call = session.graph.nodes[node_id]
            record = {**call_to_json(call), "seq": call.seq}
            # Tool calls stored running and completed after, as a live loop writes them.
            later = call.role.value == "tool" and call.status.value != "running"
            stored = {**record, "status": "running"} if later else record
            stored.pop("output", None) if later else None
            conn.execute(
                "INSERT INTO nodes (session_id, id, seq, role, data) VALUES (?, ?, ?, ?, ?)",
                (sid, call.id, call.seq, call.role.value, canonical_json(stored)),
            )
            if later:
                conn.execute(
                    "UPDATE nodes SET data = ? WHERE session_id = ? AND id = ?",
                    (canonical_json(record), sid, call.id),
                )
    conn.execute("COMMIT")
    conn.close()
    return sessions


def test_a_version_4_store_upgrades_and_answers_every_search_as_before(tmp_path: Path) -> None:
    """The real bundled session stored under step 4; after the upgrade each search is the same."""
    path = tmp_path / "v4.sqlite"
    sessions = _version_4_store(path)
    conn = sqlite3.connect(path)
    before = {query: _old_search(conn, query) for query in QUERIES}
    conn.close()
    assert sum(len(hits) for hits in before.values()) > 40
    assert all(before.values())
    # Read-only, the old file is read as it is: its graphs and the same answers.
    with open_store(path, read_only=True).unwrap() as store:
        for sid, session in sessions.items():
            assert store.load_graph(sid).unwrap() == session.graph
        for query in QUERIES:
            hits = store.search(query, limit=10).unwrap()
            assert [(h.node_id, h.seq, h.snippet, h.rank) for h in hits] == before[query]
    with SqliteStore.open(path).unwrap() as store:
        for query in QUERIES:
            hits = store.search(query, limit=10).unwrap()
            assert [(h.node_id, h.seq, h.snippet, h.rank) for h in hits] == before[query], query
        for sid, session in sessions.items():
            assert store.load_graph(sid).unwrap() == session.graph
        # New writes are indexed by the store's code.
        head = sessions["s0"].graph.order[-1]
        store.append_node(
            "s0", Call("late", "user", output="zyzzyva later", predecessor=head)
        ).unwrap()
        assert [h.node_id for h in store.search("zyzzyva").unwrap()] == ["late"]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    triggers = {
        row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
    }
    assert not {"nodes_fts_insert", "nodes_fts_complete"} & triggers
    conn.close()


def test_the_index_rows_are_written_as_the_triggers_wrote_them(tmp_path: Path) -> None:
    """The same nodes written at version 4 (triggers) and 5 (Python) index the same tokens."""
    sessions = _version_4_store(tmp_path / "v4.sqlite")
    with SqliteStore.open(tmp_path / "v5.sqlite").unwrap() as store:
        for sid, session in sessions.items():
            store.create_session(sid).unwrap()
            for node_id in session.graph.order:
                call = session.graph.nodes[node_id]
                if call.role.value == "tool" and call.status.value != "running":
                    running = attrs.evolve(call, output=None, status="running")
                    store.append_node(sid, running).unwrap()
                    store.complete_node(sid, call.id, call.output_value(), call.status).unwrap()
                else:
                    store.append_node(sid, call).unwrap()

    def vocabulary(path: Path) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(path)
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, nodes_fts, 'instance')")
        rows = conn.execute(
            "SELECT r.session_id, r.node_id, r.kind, v.term, v.offset FROM temp.v AS v "
            "JOIN nodes_fts_rows AS r ON r.id = v.doc ORDER BY 1, 2, 3, 4, 5"
        ).fetchall()
        conn.close()
        return rows

    old, new = vocabulary(tmp_path / "v4.sqlite"), vocabulary(tmp_path / "v5.sqlite")
    assert len(old) > 1_000
    assert new == old
    assert json.dumps(new[:1])
