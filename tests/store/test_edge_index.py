"""Stores keep one index of the edge each node hangs by (SQLite step 8, PostgreSQL migration 12).

A node has a predecessor or a caller, never both, so one expression index finds the
children and the callees of a node alike, and each node's write changes one page of it
instead of a page of each of two indexes. Counted in the write-ahead log's pages (each
page mapped to its table or index by ``dbstat``), not timed. A store of version 7 (two
indexes) upgrades on open, and its sessions go on unchanged.
"""

from __future__ import annotations

import sqlite3
import struct
from collections import Counter
from pathlib import Path

import pg_server
import pytest

from ctxrules.dag import Call, Graph
from ctxrules.engine.context import Context
from ctxrules.store import SqliteStore, open_store
from ctxrules.store.schema import EDGE, RESUME_STATE, SCHEMA_VERSION
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

#: A write-ahead log frame: a 24-byte header (its first 4 bytes the page number), a page.
FRAME_HEADER, PAGE = 24, 4096
EDGE_INDEXES = {"nodes_edge", "nodes_predecessor", "nodes_caller"}


def _pages_by_table(path: Path, conn: sqlite3.Connection, since: int) -> Counter[str]:
    """The log pages written after byte ``since`` of the log, by the table or index they hold."""
    pages = conn.execute("SELECT name, pageno FROM dbstat")
    owner = {int(page): str(name) for name, page in pages}
    log = Path(f"{path}-wal").read_bytes()
    found: Counter[str] = Counter()
    for at in range(since, len(log) - FRAME_HEADER - PAGE + 1, FRAME_HEADER + PAGE):
        page = struct.unpack(">I", log[at : at + 4])[0]
        found[owner.get(page, "?")] += 1
    return found


def _log_end(path: Path) -> int:
    return Path(f"{path}-wal").stat().st_size


def test_a_node_write_changes_one_page_of_edge_index(tmp_path: Path) -> None:
    """Appending a node, and completing one, each write one edge-index page (two before step 8)."""
    path = tmp_path / "s.sqlite"
    store = SqliteStore.open(path).unwrap()
    conn = store._conn
    assert isinstance(conn, sqlite3.Connection)
    conn.execute("PRAGMA wal_autocheckpoint = 0")  # the log only grows: each write's frames
    store.create_session("s").unwrap()
    store.append_node("s", Call("u1", "user", output="hi")).unwrap()
    store.append_node("s", Call("a1", "assistant", predecessor="u1")).unwrap()
    at = _log_end(path)
    store.append_node("s", Call("t1", "tool", caller="a1", name="f", status="running")).unwrap()
    appended = _pages_by_table(path, conn, at)
    at = _log_end(path)
    store.complete_node("s", "t1", "done").unwrap()
    completed = _pages_by_table(path, conn, at)
    for written in (appended, completed):
        assert {name: n for name, n in written.items() if name in EDGE_INDEXES} == {"nodes_edge": 1}
    store.close()


def _context(path: Path) -> Context:
    return Context(
        model="gpt-4o",
        window=50_000,
        store=SqliteStore.open(path).unwrap(),
        session="s",
        tokenizer=HeuristicCounter(),
        clock=lambda: 7.0,
    )


def _four_turns(ctx: Context) -> None:
    """Four turns, each a user message, a reply calling a tool, its result and a request."""
    for turn in range(4):
        ctx.add({"role": "user", "content": f"task {turn}"})
        call = (f"c{turn}", "read_file", {"path": f"m{turn}.py"})
        reply = ctx.record(openai_response(turn, f"step {turn}", [call], (900, 0)))
        ctx.add_tool_result(reply.tool_calls[0].id, f"out {turn}\n" * 20)
        ctx.openai()


def _indexes(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()
    return {str(name) for (name,) in rows} & EDGE_INDEXES


def _edges(graph: Graph) -> dict[str, tuple[list[str], list[str]]]:
    """Each node's children and callees (read by index, on a resumed graph)."""
    return {i: (list(graph.children_of(i)), list(graph.callees_of(i))) for i in graph.order}


def test_a_version_7_store_upgrades_to_one_edge_index(tmp_path: Path) -> None:
    """A store with an index per edge opens at the current version; resumed edges and the next request are as before."""
    path = tmp_path / "old.sqlite"
    with _context(path) as ctx:
        _four_turns(ctx)
    with sqlite3.connect(path, isolation_level=None) as conn:
        # Version 7 by hand: schema step 6's two edge indexes, as it made them.
        conn.execute("DROP INDEX nodes_edge")
        for statement in RESUME_STATE[:2]:
            assert isinstance(statement, str)
            conn.execute(statement)
        conn.execute("PRAGMA user_version = 7")
    assert _indexes(path) == {"nodes_predecessor", "nodes_caller"}
    with _context(path) as ctx:
        before = ctx.openai()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 11
    assert _indexes(path) == {"nodes_edge"}
    store = SqliteStore.open(path).unwrap()
    whole = _edges(store.load_graph("s").unwrap())
    assert any(callees for _, callees in whole.values())
    conn = store._conn
    assert isinstance(conn, sqlite3.Connection)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    # Asked node by node (no walk of the whole graph): each edge list read by the index.
    resumed = store.resume_session("s").unwrap().graph
    by_index = {i: (list(resumed.children_of(i)), list(resumed.callees_of(i))) for i in whole}
    assert by_index == whole
    assert sum(EDGE in s for s in statements) == 2 * len(whole)
    store.close()
    with _context(path) as ctx:
        assert ctx.openai() == before


def _pg_indexes(url: str) -> set[str]:
    import psycopg  # noqa: PLC0415 - only where the postgres extra is installed

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
        ).fetchall()
    return {str(name) for (name,) in rows} & EDGE_INDEXES


def test_a_postgresql_store_at_migration_11_moves_to_one_edge_index(
    postgres_server: pg_server.Server,
) -> None:
    """PostgreSQL as SQLite: migration 12 makes the two edge indexes one; edges and requests unchanged.

    The children and callees query is planned on the one index (sequential scans off, so
    the plan names the index the planner can use for it).
    """
    psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    from ctxrules.store.postgres.schema import EDGE as PG_EDGE  # noqa: PLC0415
    from ctxrules.store.postgres.schema import SCHEMA_VERSION as PG_VERSION  # noqa: PLC0415

    url = pg_server.fresh_schema_url(postgres_server)
    with _pg_context(url) as ctx:
        _four_turns(ctx)
    with psycopg.connect(url, autocommit=True) as conn:
        # Migration 11 by hand: migration 6's two edge indexes, as it made them.
        conn.execute("DROP INDEX nodes_edge")
        conn.execute("CREATE INDEX nodes_predecessor ON nodes (session_id, predecessor)")
        conn.execute("CREATE INDEX nodes_caller ON nodes (session_id, caller)")
        conn.execute("DELETE FROM schema_version WHERE version = 12")
    assert _pg_indexes(url) == {"nodes_predecessor", "nodes_caller"}
    with open_store(url).unwrap() as store:
        whole = _edges(store.load_graph("s").unwrap())
    assert PG_VERSION == 12
    assert _pg_indexes(url) == {"nodes_edge"}
    assert any(callees for _, callees in whole.values())
    with open_store(url).unwrap() as store:
        resumed = store.resume_session("s").unwrap().graph
        assert {
            i: (list(resumed.children_of(i)), list(resumed.callees_of(i))) for i in whole
        } == whole
    with psycopg.connect(url) as conn:
        conn.execute("SET enable_seqscan = off")
        plan = conn.execute(
            f"EXPLAIN SELECT seq, id FROM nodes WHERE session_id = 's' AND {PG_EDGE} = 'x'"  # noqa: S608 - a constant
            " AND predecessor = 'x'"
        ).fetchall()
    assert "nodes_edge" in " ".join(str(row[0]) for row in plan)
    with _pg_context(url) as ctx:
        again = ctx.openai()
    with _pg_context(url) as ctx:
        assert ctx.openai() == again


def _pg_context(url: str) -> Context:
    return Context(
        model="gpt-4o",
        window=50_000,
        store=url,
        session="s",
        tokenizer=HeuristicCounter(),
        clock=lambda: 7.0,
    )
