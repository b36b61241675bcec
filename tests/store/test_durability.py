"""Durability of a `Context` session: one transaction a turn by default, or group commit.

With ``durability="request"`` the calls that only add to the history do not wait for the
disk; a request does.

Counted on the statements each backend runs, not timed: on SQLite, the ``synchronous``
setting in force at each ``COMMIT`` (``NORMAL`` for ``add``, ``record`` and
``add_tool_result``, ``FULL`` for the request); on PostgreSQL, which transactions set
``synchronous_commit`` off. With ``durability="every_call"`` every commit syncs.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pg_server
import pytest
from test_round_trips_per_turn import CALLS, PgTrace, _turn

from ctxrules.engine.context import ConfigError, Context, Durability
from ctxrules.engine.persist import Keeper
from ctxrules.store import SqliteStore, open_store
from ctxrules.store.protocol import Store
from ctxrules.store.turn import TurnWrite
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter


def _context(store: Store, durability: Durability) -> Context:
    ctx = Context(
        model="gpt-4o",
        window=200_000,
        store=store,
        session="d",
        tokenizer=HeuristicCounter(),
        clock=lambda: 5.0,
        durability=durability,
    )
    ctx.add({"role": "user", "content": "start"})
    ctx.openai()
    return ctx


def _sqlite_modes(path: Path, durability: Durability) -> dict[str, list[str]]:
    """The ``synchronous`` mode of each commit each call made, in order."""
    store = SqliteStore.open(path).unwrap()
    ctx = _context(store, durability)
    conn = store._conn
    assert isinstance(conn, sqlite3.Connection)
    mode = ["FULL"]  # the store was opened FULL and its last commit was a request's
    commits: list[str] = []

    def trace(sql: str) -> None:
        if sql.startswith("PRAGMA synchronous = "):
            mode[0] = sql.removeprefix("PRAGMA synchronous = ")
        if sql == "COMMIT":
            commits.append(mode[0])

    conn.set_trace_callback(trace)
    modes: dict[str, list[str]] = {call: [] for call in CALLS}

    def mark(call: str) -> None:
        modes[call] += commits
        commits.clear()

    for turn in range(2):
        _turn(ctx, turn, mark)
    conn.set_trace_callback(None)
    # What was set is what SQLite runs with (the pragma was not refused).
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    ctx.close()
    store.close()
    return modes


def test_sqlite_syncs_at_each_request_by_default(tmp_path: Path) -> None:
    """A store opened FULL commits adds at NORMAL, and each request at FULL."""
    modes = _sqlite_modes(tmp_path / "group.sqlite", "request")
    assert modes == {
        "add": ["NORMAL"] * 2,
        "record": ["NORMAL"] * 2,
        "add_tool_result": ["NORMAL"] * 2,
        "openai": ["FULL"] * 2,
    }


def test_sqlite_every_call_syncs_every_commit(tmp_path: Path) -> None:
    """``durability="every_call"``: every commit at FULL, and no pragma switched."""
    modes = _sqlite_modes(tmp_path / "each.sqlite", "every_call")
    assert modes == {call: ["FULL"] * 2 for call in CALLS}


def test_a_store_opened_normal_stays_normal(tmp_path: Path) -> None:
    """A store the caller opened ``NORMAL`` is never switched to FULL by a request."""
    store = SqliteStore.open(tmp_path / "n.sqlite", synchronous="NORMAL").unwrap()
    ctx = _context(store, "request")
    statements: list[str] = []
    conn = store._conn
    assert isinstance(conn, sqlite3.Connection)
    conn.set_trace_callback(statements.append)
    _turn(ctx, 0, lambda _call: None)
    conn.set_trace_callback(None)
    assert not [s for s in statements if s.startswith("PRAGMA")]
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    ctx.close()
    store.close()


def _pg_unsynced(url: str, durability: Durability, tmp_path: Path, monkeypatch: Any) -> dict:
    store = open_store(url).unwrap()
    ctx = _context(store, durability)
    trace = PgTrace(tmp_path / f"trace-{durability}")
    seen: dict[str, list[bool]] = {call: [] for call in CALLS}

    def mark(call: str) -> None:
        trace.handle.flush()
        text = trace.path.read_text(errors="replace")
        seen[call].append("SET LOCAL synchronous_commit = off" in text)
        trace.take()

    with monkeypatch.context() as patched:
        trace.attach(patched, store)
        for turn in range(2):
            _turn(ctx, turn, mark)
    ctx.close()
    store.close()
    return seen


def test_postgresql_adds_commit_without_waiting_for_the_flush(
    postgres_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adds set ``synchronous_commit`` off for their transaction; a request does not."""
    url = pg_server.fresh_schema_url(postgres_server)
    seen = _pg_unsynced(url, "request", tmp_path, monkeypatch)
    assert seen == {
        "add": [True] * 2,
        "record": [True] * 2,
        "add_tool_result": [True] * 2,
        "openai": [False] * 2,
    }
    url = pg_server.fresh_schema_url(postgres_server)
    seen = _pg_unsynced(url, "every_call", tmp_path, monkeypatch)
    assert seen == {call: [False] * 2 for call in CALLS}


class Recording:
    """A store that records each turn it is given (and stores it in memory)."""

    def __init__(self) -> None:
        self.store = SqliteStore.open(":memory:").unwrap()
        self.turns: list[TurnWrite] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def write_turn(self, turn: TurnWrite) -> Any:
        self.turns.append(turn)
        return self.store.write_turn(turn)


def test_a_request_with_nothing_new_still_syncs_what_came_before() -> None:
    """A durable flush after writes that did not wait commits the usage again to sync them."""
    recording = Recording()
    ctx = _context(recording, "request")  # type: ignore[arg-type]
    ctx.openai()
    keeper = ctx._keeper
    assert keeper is not None
    recording.turns.clear()
    state, head = ctx.engine.states["d"], ctx.last.head if ctx.last else None
    # Nothing new since the request: nothing to sync, nothing written.
    keeper.flush(ctx.session, state, head).unwrap()
    assert recording.turns == []
    keeper.unsynced = True  # as after an add that did not wait
    keeper.flush(ctx.session, state, head).unwrap()
    [barrier] = recording.turns
    assert barrier.durable
    assert barrier.usage is not None
    assert barrier.nodes == barrier.commits == barrier.completions == ()
    assert not keeper.unsynced
    ctx.close()


def test_the_durable_flags_of_a_turn() -> None:
    """The turns `Context` hands the store: three that do not wait, then the request's."""
    for durability, expected in (
        ("request", [False, False, False, True]),
        ("every_call", [True, True, True, True]),
    ):
        recording = Recording()
        ctx = _context(recording, durability)  # type: ignore[arg-type]
        recording.turns.clear()
        _turn(ctx, 0, lambda _call: None)
        assert [t.durable for t in recording.turns] == expected, durability
        ctx.close()


def test_stored_per_turn_a_turn_is_one_synced_transaction() -> None:
    """``durability="turn"``: the calls that only add write nothing; the request writes them all.

    Its one turn holds the user message, the reply with its tool call, the tool's result,
    the head, the commit and the usage, synced; nothing else is written in the turn.
    """
    recording = Recording()
    ctx = _context(recording, "turn")  # type: ignore[arg-type]
    recording.turns.clear()
    writes: list[int] = []
    _turn(ctx, 0, lambda _call: writes.append(len(recording.turns)))
    assert writes == [0, 0, 0, 1]
    [turn] = recording.turns
    assert turn.durable
    assert [n.role.value for n in turn.nodes] == ["user", "assistant", "tool"]
    assert turn.head is not None
    assert turn.commits
    assert turn.usage is not None
    ctx.close()


def test_stored_per_turn_close_stores_what_waits(tmp_path: Path) -> None:
    """What was added after the last request is written by `close`, and a reopen finds it."""
    path = tmp_path / "turn.sqlite"
    ctx = _context(SqliteStore.open(path).unwrap(), "turn")
    ctx.add({"role": "user", "content": "one more thing"})
    with SqliteStore.open(path).unwrap() as other:
        assert len(other.load_session("d").unwrap().graph) == 1  # not stored yet
    ctx.close()
    with SqliteStore.open(path).unwrap() as other:
        graph = other.load_session("d").unwrap().graph
    assert "one more thing" in {n.output for n in graph.nodes.values()}


def test_stored_per_turn_a_search_sees_what_was_added_since_the_request() -> None:
    """A ``search_history`` call reads the store's index: what waits is written first."""
    recording = Recording()
    ctx = _context(recording, "turn")  # type: ignore[arg-type]
    ctx.add({"role": "user", "content": "the zebrafish fixture lives in data/zebra.csv"})
    ctx.openai()
    call = ("s1", "search_history", {"query": "zebrafish"})
    reply = ctx.record(openai_response(1, "looking", [call], (3_000, 0)))
    before = len(recording.turns)
    answer = ctx.answer_recall(reply.tool_calls[0])
    assert answer is not None
    assert "zebra.csv" in answer
    assert len(recording.turns) == before + 1  # the reply went in before the search ran
    ctx.close()


def test_stored_per_turn_another_tools_call_writes_nothing() -> None:
    """A loop hands every tool call to `answer_recall` first: one that is not a search waits."""
    recording = Recording()
    ctx = _context(recording, "turn")  # type: ignore[arg-type]
    call = ("r1", "read_file", {"path": "m.py"})
    reply = ctx.record(openai_response(1, "reading", [call], (3_000, 0)))
    before = len(recording.turns)
    assert ctx.answer_recall(reply.tool_calls[0]) is None
    assert len(recording.turns) == before
    ctx.close()


#: A script that ends without close() while its last reply's tool result waits.
_ENDS_WITHOUT_CLOSE = """
import sys
from ctxrules import Context
from ctxrules.testing.responses import openai_response
ctx = Context(model="gpt-4o", store=sys.argv[1], session="exit", clock=lambda: 5.0)
ctx.add({"role": "user", "content": "hi"})
ctx.openai()
call = ("c1", "read_file", {"path": "a.py"})
reply = ctx.record(openai_response(1, "reading", [call], (100, 0)))
ctx.add_tool_result(reply.tool_calls[0].id, "the file's text")
if sys.argv[2:] == ["closed-store"]:
    ctx._keeper.store.close()
"""


def test_the_default_is_one_transaction_a_turn() -> None:
    """A `Context` with a store and no ``durability`` writes nothing until its request."""
    recording = Recording()
    ctx = Context(
        model="gpt-4o",
        window=200_000,
        store=recording,  # type: ignore[arg-type]
        session="d",
        clock=lambda: 5.0,
    )
    writes: list[int] = []
    _turn(ctx, 0, lambda _call: writes.append(len(recording.turns)))
    assert writes == [0, 0, 0, 1]
    ctx.close()


def test_a_reply_with_no_tool_call_is_stored_at_once_synced() -> None:
    """It ends the turn (a final answer, then the user's silence): stored now, not at a request."""
    recording = Recording()
    ctx = _context(recording, "turn")  # type: ignore[arg-type]
    recording.turns.clear()
    ctx.add({"role": "user", "content": "and?"})
    ctx.openai()
    ctx.record(openai_response(1, "the answer", [], (100, 0)))
    ctx.add({"role": "assistant", "content": "an answer added as a message"})
    assert [t.durable for t in recording.turns] == [True, True, True]
    assert [n.output for n in recording.turns[1].nodes] == ["the answer"]
    assert [n.output for n in recording.turns[2].nodes] == ["an answer added as a message"]
    ctx.close()


def test_a_script_that_ends_without_close_keeps_its_last_turn(tmp_path: Path) -> None:
    """Stored per turn, what waits is stored when the interpreter exits normally."""
    path = tmp_path / "exit.sqlite"
    done = subprocess.run(
        [sys.executable, "-c", _ENDS_WITHOUT_CLOSE, str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    with SqliteStore.open(path).unwrap() as store:
        graph = store.load_session("exit").unwrap().graph
    outputs = [graph.nodes[i].output for i in graph.order]
    assert outputs[0] == "hi"
    assert "the file's text" in outputs


def test_a_store_closed_before_exit_is_a_warning_not_a_traceback(tmp_path: Path) -> None:
    """What waits cannot be stored: the exit says so in one line, and the stored turn is intact."""
    path = tmp_path / "exit.sqlite"
    done = subprocess.run(
        [sys.executable, "-c", _ENDS_WITHOUT_CLOSE, str(path), "closed-store"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0
    assert "Traceback" not in done.stderr
    assert "RuntimeWarning: ctxrules: at exit" in done.stderr
    with SqliteStore.open(path).unwrap() as store:
        graph = store.load_session("exit").unwrap().graph
    assert [graph.nodes[i].output for i in graph.order] == ["hi"]


def test_an_unknown_durability_is_refused() -> None:
    """A misspelt setting is a `ConfigError` naming the three it may be."""
    with pytest.raises(ConfigError, match="'request', 'every_call' or 'turn'"):
        Context(model="gpt-4o", durability="always")  # type: ignore[arg-type]


def test_keeper_flags_follow_the_last_flush() -> None:
    """`Keeper.unsynced` is set by a flush that did not wait and cleared by one that did."""
    recording = Recording()
    ctx = _context(recording, "request")  # type: ignore[arg-type]
    keeper = ctx._keeper
    assert isinstance(keeper, Keeper)
    ctx.add({"role": "user", "content": "more"})
    assert keeper.unsynced
    ctx.openai()
    assert not keeper.unsynced
    ctx.close()


def test_a_write_is_never_offered_to_the_prepared_statement_cache(
    postgres_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each text a write sends holds its values, so none is prepared (psycopg would count each)."""
    import psycopg  # noqa: PLC0415 - PostgreSQL only

    store = open_store(pg_server.fresh_schema_url(postgres_server)).unwrap()
    ctx = _context(store, "request")
    sent: list[object] = []
    real = psycopg.Connection.execute

    def execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(query, str) and query.startswith("BEGIN"):
            sent.append(kwargs.get("prepare"))
        return real(self, query, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(psycopg.Connection, "execute", execute)
        _turn(ctx, 0, lambda _call: None)
    assert len(sent) == len(CALLS)  # one opening message a call
    assert set(sent) == {False}
    ctx.close()
    store.close()
