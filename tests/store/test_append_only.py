"""Nodes are append-only and commits immutable, through the API and against raw SQL."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest
from raw_sql import raw_rows
from returns.result import Success

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Call, ConflictingEdges, NotRunning, Session, UnknownNode, UnknownReads
from ctxrules.store import (
    CorruptRecord,
    DagRefused,
    NodeConflict,
    SqliteStore,
    Store,
    StoreError,
    UnknownCommit,
)
from ctxrules.store.packing import HEADER, pack, unpack


def _store_running(store: Store, session: Session) -> Session:
    running = session.record_call(session.head, "ls", {"path": "."}, status="running").unwrap()
    store.create_session("s1").unwrap()
    store.append_graph("s1", running.graph).unwrap()
    return running


@pytest.fixture
def stored(store: Store, session: Session) -> Session:
    """The fixture session stored as 's1', plus one running tool call."""
    return _store_running(store, session)


@pytest.fixture
def sqlite_stored(sqlite_store: SqliteStore, session: Session) -> Session:
    """As `stored`, in SQLite, for the raw-SQL tests (PostgreSQL's: test_postgres.py)."""
    return _store_running(sqlite_store, session)


def _raw(path: Path, sql: str, *params: object) -> str:
    """Run one statement on a plain connection; the error text, or 'ok'."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute(sql, params)
    except sqlite3.Error as err:
        return str(err)
    finally:
        conn.close()
    return "ok"


def test_same_id_with_other_content_is_refused(store: Store, stored: Session) -> None:
    """Appending another node under a stored id fails with NodeConflict and changes nothing."""
    first = stored.graph.order[0]
    other = Call(first, "user", output="something else")
    failure = store.append_node("s1", other).failure()
    assert failure == NodeConflict("s1", first)
    assert failure.message == (
        f"session 's1': node {first!r} is already stored with different content; "
        "nodes are append-only"
    )
    assert store.load_graph("s1") == Success(stored.graph)


def test_same_node_again_returns_its_seq(store: Store, stored: Session) -> None:
    """Re-appending an identical node (a retried write) is a no-op returning the stored seq."""
    node = stored.graph.nodes[stored.graph.order[1]]
    assert store.append_node("s1", node) == Success(1)
    assert store.load_graph("s1") == Success(stored.graph)


def test_grown_graph_that_rewrites_a_node_is_refused_whole(store: Store, stored: Session) -> None:
    """append_graph with one changed node stores none of the graph's new nodes."""
    grown = stored.send("user", "more").unwrap()
    first = grown.graph.order[0]
    changed = grown.graph.nodes[first]
    forged = grown.graph.nodes.set(first, Call(first, "user", output="rewritten", seq=changed.seq))
    bad = attrs.evolve(grown.graph, nodes=forged)
    assert store.append_graph("s1", bad).failure() == NodeConflict("s1", first)
    assert store.load_graph("s1") == Success(stored.graph)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (Call("x", "user", predecessor="nope"), UnknownNode("nope", "predecessor")),
        (Call("x", "tool", caller="nope"), UnknownNode("nope", "caller")),
        (Call("x", "user", reads=("a", "b")), UnknownReads("x", ("a", "b"))),
        (Call("x", "tool", predecessor="p", caller="c"), ConflictingEdges("x", "p", "c")),
    ],
)
def test_unknown_edges_are_refused(store: Store, call: Call, error: object) -> None:
    """A node whose edges name nodes the session lacks is refused as Graph.append would."""
    store.create_session("s").unwrap()
    assert store.append_node("s", call).failure() == DagRefused("s", error)  # type: ignore[arg-type]
    assert len(store.load_graph("s").unwrap()) == 0


def test_complete_fills_a_running_node_exactly_once(store: Store, stored: Session) -> None:
    """The first complete lands as Graph.complete would; the second is refused as NotRunning."""
    tool = stored.graph.order[-1]
    assert store.complete_node("s1", tool, ["a.py"], "error") == Success(None)
    assert (
        store.load_session("s1").unwrap().graph
        == stored.complete(tool, ["a.py"], "error").unwrap().graph
    )
    again = store.complete_node("s1", tool, ["b.py"]).failure()
    assert again == DagRefused("s1", NotRunning(tool, "error"))
    done = stored.graph.order[0]
    assert store.complete_node("s1", done, 1).failure() == DagRefused(
        "s1", NotRunning(done, "done")
    )
    assert store.complete_node("s1", "nope", 1).failure() == DagRefused(
        "s1", UnknownNode("nope", "node_id")
    )


def test_complete_checks_status_and_payload(store: Store, stored: Session) -> None:
    """A final status other than done/error, or a payload that is not JSON, is refused."""
    tool = stored.graph.order[-1]
    assert store.complete_node("s1", tool, 1, "running").failure().message == (
        "session 's1': status: expected 'done' or 'error', found 'running'"
    )
    assert "found a value of type set" in store.complete_node("s1", tool, {1, 2}).failure().message
    assert store.load_session("s1").unwrap().running == {tool}


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        (
            "UPDATE nodes SET data = json_set(data, '$.output', 'forged')",
            "nodes are append-only: only a running node is completed, once",
        ),
        (
            "UPDATE nodes SET seq = seq + 100",
            "nodes are append-only: only a running node is completed, once",
        ),
        ("DELETE FROM nodes WHERE seq = 0", "nodes are append-only: a node is never deleted"),
        (
            (
                "INSERT OR REPLACE INTO nodes (session_id, id, seq, role, data) "
                "SELECT session_id, id, seq, role, json_set(data, '$.output', 'forged') "
                "FROM nodes WHERE seq = 0"
            ),
            "nodes are append-only: this node id or seq is already stored",
        ),
        (
            "UPDATE commits SET head_node_id = 'forged'",
            "commits are immutable: a content-addressed commit never changes",
        ),
        (
            "DELETE FROM commits",
            "commits are immutable: a content-addressed commit is never deleted",
        ),
        (
            (
                "INSERT OR REPLACE INTO commits SELECT id, session_id, seq + 1, 'forged', data "
                "FROM commits"
            ),
            "commits are immutable: this commit id is already stored",
        ),
    ],
)
def test_raw_sql_cannot_rewrite_history(
    sqlite_store: SqliteStore, sqlite_stored: Session, db_path: Path, sql: str, error: str
) -> None:
    """The triggers abort UPDATE, DELETE and REPLACE of nodes and commits from any connection."""
    store, stored = sqlite_store, sqlite_stored
    commit = ContextCommit("s1").append_items([ContextItem("n", "user", tokens=1)])
    store.put_commit(commit).unwrap()
    assert _raw(db_path, sql) == error
    assert store.load_graph("s1") == Success(stored.graph)
    assert store.get_commit(commit.id) == Success(commit)


def test_raw_sql_may_complete_a_running_node_once(
    sqlite_store: SqliteStore, sqlite_stored: Session, db_path: Path
) -> None:
    """The triggers let through exactly the complete path, and only the first time."""
    store, stored = sqlite_store, sqlite_stored
    tool = stored.graph.order[-1]
    complete = (
        "UPDATE nodes SET data = json_set(data, '$.output', ?, '$.status', 'done') WHERE id = ?"
    )
    forged = complete.replace("WHERE", ", handle = 'h:forged00' WHERE")
    assert _raw(db_path, forged, "out", tool) == (
        "nodes are append-only: only a running node is completed, once"
    )
    assert _raw(db_path, complete, "out", tool) == "ok"
    assert _raw(db_path, complete, "again", tool) == (
        "nodes are append-only: only a running node is completed, once"
    )
    assert store.load_graph("s1") == stored.complete(tool, "out").map(lambda s: s.graph)


def test_commit_insert_is_idempotent(store: Store) -> None:
    """Putting a commit twice stores it once; its id names its content everywhere."""
    store.create_session("s").unwrap()
    commit = ContextCommit("s").append_items([ContextItem("u", "user", rendered="hi", tokens=1)])
    assert store.put_commit(commit) == Success(None)
    assert store.put_commit(commit) == Success(None)
    assert store.commits_for("s") == Success([commit])
    assert store.get_commit("c_missing").failure() == UnknownCommit("c_missing")


def test_a_commit_edited_behind_the_store_is_corrupt_not_different(
    sqlite_store: SqliteStore, db_path: Path
) -> None:
    """With the triggers dropped and a row rewritten, the id check refuses the row on read."""
    store = sqlite_store
    store.create_session("s").unwrap()
    commit = ContextCommit("s").append_items([ContextItem("u", "user", rendered="hi", tokens=1)])
    store.put_commit(commit).unwrap()
    assert _raw(db_path, "DROP TRIGGER commits_no_update") == "ok"
    ((data,),) = raw_rows(db_path, "SELECT data FROM commits")
    header = json.loads(unpack(data))
    edited = pack(json.dumps({**header, "summary": "x"}), HEADER)
    assert _raw(db_path, "UPDATE commits SET data = ?", edited) == "ok"
    failure = store.get_commit(commit.id).failure()
    assert isinstance(failure, CorruptRecord)
    assert failure.message.startswith(f"commit {commit.id!r} cannot be read: the content hashes")


def _item_rewritten(
    store: SqliteStore, db_path: Path, edit: Callable[[bytes], bytes]
) -> StoreError | None:
    """Store a one-item commit, rewrite its item row with ``edit`` (triggers dropped), read it."""
    store.create_session("s").unwrap()
    commit = ContextCommit("s").append_items([ContextItem("u", "user", rendered="hi", tokens=1)])
    store.put_commit(commit).unwrap()
    assert _raw(db_path, "DROP TRIGGER items_no_update") == "ok"
    ((digest, data),) = raw_rows(db_path, "SELECT digest, data FROM items")
    assert isinstance(data, bytes), "items are stored packed"
    assert _raw(db_path, "UPDATE items SET data = ? WHERE digest = ?", edit(data), digest) == "ok"
    return SqliteStore.open(db_path).unwrap().get_commit(commit.id).failure()


def test_an_item_edited_behind_the_store_is_corrupt_not_different(
    sqlite_store: SqliteStore, db_path: Path
) -> None:
    """An item row rewritten with the triggers dropped no longer hashes to its key: refused."""
    failure = _item_rewritten(
        sqlite_store, db_path, lambda data: pack(unpack(data).replace('"hi"', '"ho"'))
    )
    assert isinstance(failure, CorruptRecord)
    assert "does not match its digest" in failure.message


def test_an_item_row_cut_short_is_corrupt(sqlite_store: SqliteStore, db_path: Path) -> None:
    """A packed item row that does not unpack (its last bytes lost) is refused, not misread."""
    failure = _item_rewritten(sqlite_store, db_path, lambda data: data[:-3])
    assert isinstance(failure, CorruptRecord)
    assert "packed row" in failure.message
