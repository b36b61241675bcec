"""A turn reads the stored rows it is based on only when its counts say a write needs them.

`Store.write_turn` counts, in its one statement of scalar reads, how many of the new nodes,
edge targets and commits are stored; the rows are read only when a count is not what a
fresh turn gives. These tests take the other paths, on both backends: a node stored
already (the same: skipped; another: refused), an edge to a node never stored, a commit
stored already, and check each decision is the one the rows give.
"""

from __future__ import annotations

import sqlite3

from returns.result import Failure, Success

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Call, UnknownNode
from ctxrules.store import SqliteStore, Store
from ctxrules.store.errors import DagRefused, NodeConflict
from ctxrules.store.turn import TurnWrite


def _started(store: Store) -> None:
    store.create_session("s").unwrap()
    first = TurnWrite("s", nodes=(Call("u1", "user", output="hi"),), head=(None, "u1"))
    assert store.write_turn(first).unwrap().seqs == (0,)


def test_a_node_stored_the_same_is_skipped_with_its_seq(store: Store) -> None:
    """A retried turn: its stored node keeps its seq, the new one after it gets the next."""
    _started(store)
    again = TurnWrite(
        "s",
        nodes=(Call("u1", "user", output="hi"), Call("a1", "assistant", predecessor="u1")),
    )
    assert store.write_turn(again).unwrap().seqs == (0, 1)
    assert list(store.load_graph("s").unwrap().order) == ["u1", "a1"]


def test_a_node_stored_otherwise_is_refused(store: Store) -> None:
    """Another node under a stored id: `NodeConflict`, and nothing of the turn is stored."""
    _started(store)
    other = TurnWrite(
        "s",
        nodes=(Call("a1", "assistant", predecessor="u1"), Call("u1", "user", output="bye")),
    )
    refused = store.write_turn(other)
    assert isinstance(refused, Failure)
    assert refused.failure() == NodeConflict("s", "u1")
    assert list(store.load_graph("s").unwrap().order) == ["u1"]


def test_an_edge_to_a_node_never_stored_is_refused(store: Store) -> None:
    """The count of stored targets falls short: the rows say which one is missing."""
    _started(store)
    dangling = TurnWrite("s", nodes=(Call("a1", "assistant", predecessor="nowhere"),))
    refused = store.write_turn(dangling)
    assert isinstance(refused, Failure)
    assert refused.failure() == DagRefused("s", UnknownNode("nowhere", "predecessor"))


def test_a_commit_stored_already_is_not_written_again(store: Store) -> None:
    """The same commit in a second turn: counted as stored, written once, no object again."""
    _started(store)
    commit = ContextCommit("s", items=[ContextItem("u1", "user", rendered="hi", tokens=1)])
    first = store.write_turn(TurnWrite("s", commits=(commit,)))
    assert first.unwrap().object_rows > 0
    again = store.write_turn(TurnWrite("s", commits=(commit,)))
    assert isinstance(again, Success)
    assert again.unwrap().object_rows == 0
    assert [c.id for c in store.commits_for("s").unwrap()] == [commit.id]


def test_a_fresh_turn_reads_no_node_rows(sqlite_store: SqliteStore) -> None:
    """New nodes whose edges are stored: one read, the counts; no read of node rows.

    Before the counts the turn read the new ids' rows and the edge targets' apart.
    """
    _started(sqlite_store)
    conn = sqlite_store._conn
    assert isinstance(conn, sqlite3.Connection)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    turn = TurnWrite(
        "s",
        nodes=(Call("a1", "assistant", predecessor="u1"), Call("u2", "user", predecessor="a1")),
        head=("u1", "u2"),
    )
    assert sqlite_store.write_turn(turn).unwrap().seqs == (1, 2)
    conn.set_trace_callback(None)
    # The statement of scalar reads only (the search index waits for a batch of rows).
    reads = [s for s in statements if s.lstrip().startswith("SELECT")]
    assert len(reads) == 1
    assert "count(*)" in reads[0]
