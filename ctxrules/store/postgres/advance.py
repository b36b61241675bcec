"""`append_at_head` in three round trips: the hot path of many workers on one session.

The reads it bases itself on (the session lock, the head, the node if already stored, the
edge targets) go to the server in one pipeline, in order, so each read runs after the lock
is held; the insert and the head move go in a second; the commit is the third.
"""

from __future__ import annotations

from returns.result import Failure, Result, Success

from ctxrules.dag import Call
from ctxrules.store.errors import (
    DagRefused,
    HeadMoved,
    NodeConflict,
    StoreError,
    UnknownSession,
)
from ctxrules.store.nodes import edge_error, edge_targets, same_node
from ctxrules.store.postgres.link import Conn
from ctxrules.store.postgres.nodes import SELECT_STORED, decode, insert_statement
from ctxrules.store.postgres.rows import pg_sql

_SET_HEAD = (
    "INSERT INTO heads (session_id, name, node_id) VALUES (%s, %s, %s)"
    " ON CONFLICT (session_id, name) DO UPDATE SET node_id = excluded.node_id"
)


def append_at_head(
    conn: Conn, session_id: str, call: Call, head_name: str
) -> Result[int, StoreError]:
    """Append ``call`` and move the head from ``call.predecessor`` to it; `HeadMoved` if stale."""
    targets = edge_targets(call)
    with conn.pipeline():
        # Order matters: the server runs these one after the other, each with a fresh
        # snapshot, so every read after the lock sees the last committed writer.
        lock = conn.execute("SELECT 1 FROM sessions WHERE id = %s FOR NO KEY UPDATE", (session_id,))
        head = conn.execute(
            "SELECT node_id FROM heads WHERE session_id = %s AND name = %s",
            (session_id, head_name),
        )
        stored = conn.execute(pg_sql(SELECT_STORED), (session_id, call.id))
        present = conn.execute(
            "SELECT id FROM nodes WHERE session_id = %s AND id = ANY(%s)", (session_id, targets)
        )
        if lock.fetchone() is None:
            return Failure(UnknownSession(session_id))
        head_row = head.fetchone()
        actual = None if head_row is None else str(head_row[0])
        row = stored.fetchone()
        found = None if row is None else decode(call.id, row)
        # The head at this very call, stored the same: the call made again after its
        # acknowledgment was lost (checked below); its stored seq, as for any retried append.
        if actual != call.predecessor and (found is None or actual != call.id):
            return Failure(HeadMoved(session_id, head_name, call.predecessor, actual))
        missing = set(targets) - {r[0] for r in present.fetchall()}
        if found is not None and not same_node(found, call):
            return Failure(NodeConflict(session_id, call.id))
        error = edge_error(call, missing) if found is None else None
        if error is not None:
            return Failure(DagRefused(session_id, error))
        sql, params = insert_statement(session_id, call)
        inserted = conn.execute(pg_sql(sql), params) if found is None else None
        conn.execute(_SET_HEAD, (session_id, head_name, call.id))
        seq_row = None if inserted is None else inserted.fetchone()
    if found is not None:
        return Success(found.seq)
    return Success(int(seq_row[0]) if seq_row is not None else 0)
