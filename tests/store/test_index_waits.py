"""SQLite's search index is filled a batch at a time: the rows wait until 64 of them do.

Counted, not timed: each node written adds the row naming what to index; its text goes
into the FTS5 index at the first durable write (a request) once `INDEX_BATCH_ROWS` rows
wait, all in one insert, so one index segment is written a batch (16 turns) instead of one
a request (FTS5's cost per row falls from ~28 us in fours to ~8 us in sixty-fours). A
search, and a store opened or closed for writing, index what waits first, so nothing
stored is ever missing from a search (including what a killed writer left waiting).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from test_round_trips_per_turn import CALLS, _turn

from ctxrules.engine.context import Context
from ctxrules.store import SqliteStore
from ctxrules.store.sqlite import INDEX_BATCH_ROWS
from ctxrules.tokens import HeuristicCounter


def _context(store: SqliteStore) -> Context:
    ctx = Context(
        model="gpt-4o",
        window=200_000,
        store=store,
        session="w",
        tokenizer=HeuristicCounter(),
        clock=lambda: 5.0,
        # Each call written at once: the rows wait in the store, not in the object.
        durability="request",
    )
    ctx.add({"role": "user", "content": "start"})
    ctx.openai()
    return ctx


def _indexed(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM nodes_fts_docsize").fetchone()[0])


def test_the_index_is_filled_once_a_batch_waits(tmp_path: Path) -> None:
    """No index insert in the adding calls; one request puts every waiting row in at once."""
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

    turns = INDEX_BATCH_ROWS // 4 + 1
    for turn in range(turns):
        _turn(ctx, turn, mark)
    conn.set_trace_callback(None)
    # Each turn stores four index rows; the one request at which a batch waits indexes
    # them all (and the first message's). The old code put four in at every request.
    batch = 1 + 4 * (INDEX_BATCH_ROWS // 4)
    assert inserts == {
        "add": [0] * turns,
        "record": [0] * turns,
        "add_tool_result": [0] * turns,
        "openai": [0] * (turns - 2) + [batch, 0],
    }
    waiting = conn.execute(
        "SELECT count(*) FROM nodes_fts_rows WHERE id > (SELECT max(id) FROM nodes_fts_docsize)"
    ).fetchone()[0]
    assert waiting == 4
    ctx.close()
    store.close()


def test_a_closed_store_leaves_nothing_waiting(tmp_path: Path) -> None:
    """Closing a store indexes what waits: a store opened read-only after finds every node."""
    path = tmp_path / "w.sqlite"
    store = SqliteStore.open(path).unwrap()
    ctx = _context(store)
    ctx.add({"role": "user", "content": "a narwhal surfaced"})
    ctx.openai()
    assert _indexed(path) == 0  # fewer than a batch wait
    ctx.close()
    store.close()
    assert _indexed(path) == 2
    reader = SqliteStore.open(path, read_only=True).unwrap()
    assert [hit.session_id for hit in reader.search("narwhal").unwrap()] == ["w"]
    reader.close()


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
    assert _indexed(path) == before == 0
    store._conn = None  # the process is gone: nothing more is written by it
    reopened = SqliteStore.open(path).unwrap()
    assert _indexed(path) == 3  # the first message's row, and the two okapis
    reopened.close()
    reader = SqliteStore.open(path, read_only=True).unwrap()
    assert len(reader.search("okapi").unwrap()) == 2
    reader.close()
