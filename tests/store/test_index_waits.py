"""SQLite's search index is filled once a request: the calls that only add leave their rows waiting.

Counted, not timed: each node written adds the row naming what to index; its text goes
into the FTS5 index at the next durable write (a request), the turn's rows in one insert,
so one index segment is written a request instead of one a call. A search, and a store
opened for writing, index what waits first, so nothing stored is ever missing from a
search (including what a killed writer left waiting).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from test_round_trips_per_turn import CALLS, _turn

from ctxrules.engine.context import Context
from ctxrules.store import SqliteStore
from ctxrules.tokens import HeuristicCounter


def _context(store: SqliteStore) -> Context:
    ctx = Context(
        model="gpt-4o",
        window=200_000,
        store=store,
        session="w",
        tokenizer=HeuristicCounter(),
        clock=lambda: 5.0,
    )
    ctx.add({"role": "user", "content": "start"})
    ctx.openai()
    return ctx


def _indexed(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM nodes_fts_docsize").fetchone()[0])


def test_a_turn_fills_the_index_once_at_its_request(tmp_path: Path) -> None:
    """The index's inserts of a turn: none in the three adding calls, one of four rows at the request."""
    store = SqliteStore.open(tmp_path / "w.sqlite").unwrap()
    ctx = _context(store)
    conn = store._conn
    assert conn is not None
    traced: list[str] = []
    conn.set_trace_callback(traced.append)
    inserts: dict[str, list[int]] = {call: [] for call in CALLS}

    def mark(call: str) -> None:
        # executemany traces each row it binds: one line per row put into the index.
        inserts[call].append(sum(s.startswith("INSERT INTO nodes_fts (") for s in traced))
        traced.clear()

    for turn in range(3):
        _turn(ctx, turn, mark)
    conn.set_trace_callback(None)
    # The old code put each row in at once: 1, 2, 1 in the adding calls, 0 at the request.
    assert inserts == {
        "add": [0, 0, 0],
        "record": [0, 0, 0],
        "add_tool_result": [0, 0, 0],
        "openai": [4, 4, 4],
    }
    waiting = conn.execute(
        "SELECT count(*) FROM nodes_fts_rows WHERE id > (SELECT max(id) FROM nodes_fts_docsize)"
    ).fetchone()[0]
    assert waiting == 0
    ctx.close()
    store.close()


def test_a_search_finds_a_node_added_since_the_last_request(tmp_path: Path) -> None:
    """A search indexes what waits first: a message added after the request is found at once."""
    store = SqliteStore.open(tmp_path / "w.sqlite").unwrap()
    ctx = _context(store)
    ctx.add({"role": "user", "content": "the zebrafish genome"})
    assert [hit.session_id for hit in store.search("zebrafish").unwrap()] == ["w"]
    ctx.close()
    store.close()


def test_rows_a_killed_writer_left_waiting_are_indexed_when_the_store_opens(
    tmp_path: Path,
) -> None:
    """A writer that never reached its request (its process killed): the next opener indexes its rows.

    Even a store then opened read-only (which cannot write the index) finds them.
    """
    path = tmp_path / "w.sqlite"
    store = SqliteStore.open(path).unwrap()
    ctx = _context(store)
    before = _indexed(path)
    ctx.add({"role": "user", "content": "an okapi in the forest"})
    ctx.add({"role": "user", "content": "a second okapi"})
    # As a kill leaves it: the rows stored, their texts not in the index.
    assert _indexed(path) == before
    store._conn = None  # the process is gone: nothing more is written by it
    reopened = SqliteStore.open(path).unwrap()
    assert _indexed(path) == before + 2
    reopened.close()
    reader = SqliteStore.open(path, read_only=True).unwrap()
    assert len(reader.search("okapi").unwrap()) == 2
    reader.close()
