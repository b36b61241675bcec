"""A turn with a store costs the same few statements and round trips at any session length.

Counted, not timed. By default (``durability="turn"``) an agent turn (a user message, a
reply with a tool call, the tool's result, the next request) is one transaction, at the
request; with ``durability="request"`` each call is one. On PostgreSQL a transaction is
two round trips (the reads its writes are based on, with ``BEGIN`` and the session's
lock; then the writes with ``COMMIT``), counted in libpq's trace of the connection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pg_server
import pytest

from ctxrules.engine.context import Context, Durability
from ctxrules.store import SqliteStore, open_store
from ctxrules.store.protocol import Store
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

#: The calls of one turn, in order.
CALLS = ("add", "record", "add_tool_result", "openai")


def _context(store: Store, size: int, durability: Durability | None) -> Context:
    # None: the default, as a user who names no durability gets it.
    asked = {"durability": durability} if durability is not None else {}
    ctx = Context(
        model="gpt-4o",
        window=200_000,
        store=store,
        session="t",
        tokenizer=HeuristicCounter(),
        clock=lambda: 5.0,
        **asked,  # type: ignore[arg-type]
    )
    # Earlier turns: what a turn writes does not depend on what they hold.
    ctx.add(*({"role": "user", "content": f"task {n}: " + "word " * 20} for n in range(size)))
    ctx.openai()
    return ctx


def _turn(ctx: Context, turn: int, mark: Any) -> None:
    ctx.add({"role": "user", "content": f"next {turn}"})
    mark("add")
    call = (f"c{turn}", "read_file", {"path": f"m{turn}.py"})
    reply = ctx.record(openai_response(turn, f"step {turn}", [call], (3_000, 0)))
    mark("record")
    ctx.add_tool_result(reply.tool_calls[0].id, f"out {turn}\n" * 40)
    mark("add_tool_result")
    ctx.openai()
    mark("openai")


class PgTrace:
    """libpq's trace of every connection one store lends: statements and round trips."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle = path.open("wb")

    def attach(self, monkeypatch: pytest.MonkeyPatch, store: Store) -> None:
        """Trace the connections ``store`` lends from now on."""
        from psycopg.pq import Trace  # noqa: PLC0415 - PostgreSQL only

        from ctxrules.store.postgres.link import Link  # noqa: PLC0415 - PostgreSQL only

        mine, lend = store._link, Link.connection  # type: ignore[attr-defined]
        handle = self.handle

        @contextmanager
        def traced(link: Link) -> Iterator[Any]:
            with lend(link) as conn:
                if link is mine:
                    conn.pgconn.trace(handle.fileno())
                    conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS | Trace.REGRESS_MODE)
                try:
                    yield conn
                finally:
                    if link is mine:
                        conn.pgconn.untrace()

        monkeypatch.setattr(Link, "connection", traced)

    def take(self) -> tuple[int, int]:
        """Statements the server ran and round trips made since the last take."""
        self.handle.flush()
        lines = self.path.read_text(errors="replace").splitlines()
        self.handle.seek(0)
        self.handle.truncate()
        statements = trips = 0
        last = ""
        for line in lines:
            side, _, rest = line.partition("\t")
            statements += side == "B" and "\tCommandComplete\t" in f"\t{rest}"
            trips += side == "B" and last == "F"
            last = side if side in ("F", "B") else last
        return statements, trips


def _pg_counts(
    url: str,
    size: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    durability: Durability | None = "request",
) -> dict[str, list[tuple[int, int]]]:
    store = open_store(url).unwrap()
    ctx = _context(store, size, durability)
    trace = PgTrace(tmp_path / f"trace-{size}-{durability}")
    counts: dict[str, list[tuple[int, int]]] = {call: [] for call in CALLS}
    with monkeypatch.context() as patched:
        trace.attach(patched, store)
        for turn in range(3):
            _turn(ctx, turn, lambda call: counts[call].append(trace.take()))
    ctx.close()
    store.close()
    return counts


def test_a_postgresql_turn_stored_per_call_is_two_round_trips_a_call(
    postgres_server: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each call of a turn: its statements in two round trips, the same at 30 and 300 messages."""
    small = _pg_counts(pg_server.fresh_schema_url(postgres_server), 30, tmp_path, monkeypatch)
    large = _pg_counts(pg_server.fresh_schema_url(postgres_server), 300, tmp_path, monkeypatch)
    assert small == large
    for call in CALLS:
        assert {trips for _, trips in small[call]} == {2}, (call, small[call])
    # (statements the server ran, round trips) per call: BEGIN and COMMIT included.
    assert {c: set(v) for c, v in small.items()} == EXPECTED_PG


#: BEGIN, the lock, the reads (one statement of the next seq, the head and how many of the
#: new nodes, edge targets and commits are stored; a completion's node), the writes,
#: COMMIT; a call that only adds also sets ``synchronous_commit`` off (test_durability.py).
#: The stored rows themselves are read only when a count says a write needs them: before,
#: "add" and "record" read the new nodes and the targets apart (9 and 11 statements), and
#: "openai" the commit (9).
EXPECTED_PG = {
    "add": {(7, 2)},  # one node and the head
    "record": {(9, 2)},  # the reply, its tool call, the head and the usage
    "add_tool_result": {(7, 2)},  # a completion: its node read, no next seq
    # The commit (its new items in one insert: it extends its parent, so no tree node) and
    # the reference tracker; a commit stored with its tree adds the insert of its nodes.
    "openai": {(7, 2)},
}


def _sqlite_counts(
    path: Path, size: int, durability: Durability | None = "request"
) -> dict[str, list[int]]:
    store = SqliteStore.open(path, synchronous="NORMAL").unwrap()
    ctx = _context(store, size, durability)
    statements: list[str] = []
    conn = store._conn
    assert isinstance(conn, sqlite3.Connection)
    conn.set_trace_callback(statements.append)
    counts: dict[str, list[int]] = {call: [] for call in CALLS}

    def mark(call: str) -> None:
        # A trigger's or the full-text index's own steps are traced as "-- …": not ours.
        counts[call].append(sum(not s.startswith("--") for s in statements))
        statements.clear()

    for turn in range(3):
        _turn(ctx, turn, mark)
    conn.set_trace_callback(None)
    ctx.close()
    store.close()
    return counts


def test_a_sqlite_turn_stored_per_call_runs_the_same_statements_at_any_length(
    tmp_path: Path,
) -> None:
    """Stored per call, each call of a turn runs the same statements at 300 and at 600 messages.

    SQLite traces each row of an insert of many apart. Each request's commit only adds to
    its parent's, so it is stored as its extension: no tree row (one per level of the tree
    before, and both sessions' trees have two levels).
    """
    small = _sqlite_counts(tmp_path / "small.sqlite", 300)
    large = _sqlite_counts(tmp_path / "large.sqlite", 600)
    assert small == large
    assert {c: set(v) for c, v in small.items()} == EXPECTED_SQLITE


#: BEGIN, the reads (one of the session, next seq, head and how many of the new nodes, edge
#: targets and commits are stored; a completion's node), the writes with each node's index
#: row, COMMIT. Before the counts, the new nodes and the targets were read apart (10, 15
#: and 17 statements); before the index was filled a batch at a time, each request also
#: read the rows waiting and put the turn's four into the index (16). A turn of these
#: sessions (their 300 and 600 rows indexed at their first request) leaves its rows waiting.
EXPECTED_SQLITE = {"add": {8}, "record": {13}, "add_tool_result": {7}, "openai": {9}}


def test_a_default_sqlite_turn_is_one_transaction_of_the_same_statements_at_any_length(
    tmp_path: Path,
) -> None:
    """By default the calls that only add run no statement; the request runs them all, the same at 300 and 600 messages."""
    small = _sqlite_counts(tmp_path / "small.sqlite", 300, None)
    large = _sqlite_counts(tmp_path / "large.sqlite", 600, None)
    assert small == large
    assert {c: set(v) for c, v in small.items()} == EXPECTED_SQLITE_TURN


#: One BEGIN and one COMMIT for the turn: the reads once, the three nodes and the
#: completion's rows, the head, the commit and the tracker (SQLite traces each row of an
#: insert of many apart).
EXPECTED_SQLITE_TURN = {"add": {0}, "record": {0}, "add_tool_result": {0}, "openai": {23}}


def test_a_default_postgresql_turn_is_two_round_trips(
    postgres_server: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """By default a turn is one transaction at its request: two round trips at 30 and 300 messages."""
    url = pg_server.fresh_schema_url
    small = _pg_counts(url(postgres_server), 30, tmp_path, monkeypatch, None)
    large = _pg_counts(url(postgres_server), 300, tmp_path, monkeypatch, None)
    assert small == large
    assert {c: set(v) for c, v in small.items()} == {
        "add": {(0, 0)},
        "record": {(0, 0)},
        "add_tool_result": {(0, 0)},
        "openai": {(12, 2)},
    }
