"""Storing a whole graph (`save_session`, what `copy_sessions` and `ctxrules migrate` run) reads in parts.

Counted, not timed: the reads the checks are made from (the nodes stored, the edge
targets stored, the next seq) are one batch for each part of `GRAPH_PART` nodes, not
three statements a node (three round trips a node on PostgreSQL).
"""

from __future__ import annotations

from pathlib import Path

from ctxrules.dag import Session
from ctxrules.store import SqliteStore
from ctxrules.store.nodes import GRAPH_PART


def _session(count: int) -> Session:
    session = Session("g")
    for n in range(count):
        role = "user" if n % 2 == 0 else "assistant"
        session = session.send(role, f"message {n}").unwrap()
    return session


def test_a_graph_is_stored_with_a_few_reads_a_part(tmp_path: Path) -> None:
    """1,200 nodes: three parts of reads (the old code made 3,600 reads)."""
    count = 1_200
    store = SqliteStore.open(tmp_path / "g.sqlite").unwrap()
    store.create_session("g").unwrap()
    conn = store._conn
    assert conn is not None
    traced: list[str] = []
    conn.set_trace_callback(traced.append)
    session = _session(count)
    assert store.save_session(session).unwrap() == count
    conn.set_trace_callback(None)
    node_reads = [s for s in traced if s.startswith("SELECT") and "FROM nodes" in s]
    parts = -(-count // GRAPH_PART)
    # Per part: the stored nodes among its ids, the edge targets stored, the next seq.
    assert len(node_reads) <= 3 * parts
    assert store.load_session("g").unwrap().graph == session.graph
    # Saved again: nothing added, the same few reads.
    traced.clear()
    conn.set_trace_callback(traced.append)
    assert store.save_session(session).unwrap() == 0
    conn.set_trace_callback(None)
    assert sum(s.startswith("SELECT") and "FROM nodes" in s for s in traced) <= 3 * parts
    store.close()
