"""The SQLite text index keeps no copy of the text (schema step 4), and searches as before.

The copy (``nodes_fts_content``) was a quarter of a store; snippets are now cut from the
hits' own nodes. A store at version 3 upgrades, its nodes indexed again; VACUUM, which
may renumber a table's implicit row ids, leaves every hit in place.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ctxrules.dag import Session, call_to_json
from ctxrules.store import SqliteStore, Store, open_store
from ctxrules.store.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION


def _session() -> Session:
    return (
        Session("s")
        .send("user", "Where is the TOML loader?")
        .bind(lambda s: s.send("assistant", "Let me grep for tomllib."))
        .bind(lambda s: s.record_call(s.head, "grep", {"pattern": "tomllib"}, status="running"))
    ).unwrap()


def _hits(store: SqliteStore, query: str) -> list[tuple[int, str]]:
    return [(hit.seq, hit.snippet) for hit in store.search(query, session_id="s").unwrap()]


def test_the_index_holds_no_text_and_snippets_come_from_the_nodes(tmp_path: Path) -> None:
    """No content table; a completed node's output is found, cut as FTS5 cuts it."""
    path = tmp_path / "s.sqlite"
    session = _session()
    tool = session.graph.order[-1]
    with SqliteStore.open(path).unwrap() as store:
        store.save_session(session).unwrap()
        store.complete_node("s", tool, ["src/spec/load.py"]).unwrap()
        assert _hits(store, "tomllib") == [
            (2, 'grep {"pattern":"[tomllib]"}'),
            (1, "Let me grep for [tomllib]."),
        ]
        assert _hits(store, "load*") == [
            (0, "Where is the TOML [loader]?"),
            (2, 'grep ["src/spec/[load].py"]'),
        ]
    conn = sqlite3.connect(path)
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "nodes_fts_content" not in names
    assert "nodes_fts_rows" in names
    conn.execute("VACUUM")
    conn.close()
    with open_store(path, read_only=True).unwrap() as store:
        assert _hits(store, "tomllib") == [
            (2, 'grep {"pattern":"[tomllib]"}'),
            (1, "Let me grep for [tomllib]."),
        ]


def test_a_version_3_store_is_indexed_again(tmp_path: Path) -> None:
    """A store written under step 3 (the text copied into the index) upgrades and searches."""
    path = tmp_path / "v3.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for step in MIGRATIONS[:3]:
        for statement in step:
            if isinstance(statement, str):
                conn.execute(statement)
            else:
                assert statement(conn) is None
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 3")
    conn.execute("INSERT INTO sessions (id, created_at) VALUES ('s', 0)")
    graph = _session().graph
    for node_id in graph.order:
        call = graph.nodes[node_id]
        conn.execute(
            "INSERT INTO nodes (session_id, id, seq, role, data) VALUES ('s', ?, ?, ?, ?)",
            (call.id, call.seq, call.role.value, json.dumps(call_to_json(call))),
        )
    conn.execute("COMMIT")
    conn.close()
    with SqliteStore.open(path).unwrap() as store:
        assert _hits(store, "tomllib") == [
            (2, 'grep {"pattern":"[tomllib]"}'),
            (1, "Let me grep for [tomllib]."),
        ]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def test_the_index_reads_the_head_of_a_huge_output(store: Store) -> None:
    """Both backends index the first 100,000 characters; the node keeps its output whole."""
    huge = "headword " + "filler " * 30_000 + "tailword"
    session = (
        Session("s")
        .send("user", "run it")
        .bind(lambda s: s.record_call(s.head, "bash", {"cmd": "make"}, status="running"))
    ).unwrap()
    tool = session.graph.order[-1]
    store.save_session(session).unwrap()
    store.complete_node("s", tool, huge).unwrap()
    assert [hit.node_id for hit in store.search("headword", session_id="s").unwrap()] == [tool]
    assert store.search("tailword", session_id="s").unwrap() == []
    assert store.load_graph("s").unwrap().nodes[tool].output_value() == huge
