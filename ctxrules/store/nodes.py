"""Node rows: append with the next seq, complete once, and rebuild the graph in seq order.

Every function runs inside the caller's transaction (see `connection.run`), so the checks
and the write they guard see the same state.
"""

from __future__ import annotations

import sqlite3

from returns.result import Failure, Result, Success

from ctxrules.canonical import canonical_json
from ctxrules.dag import (
    Call,
    ConflictingEdges,
    DagError,
    Graph,
    InvalidValue,
    NotRunning,
    Status,
    UnknownNode,
    UnknownReads,
    call_to_json,
    freeze,
    thaw,
)
from ctxrules.dag.bulk import graph_from_records
from ctxrules.store.errors import CorruptRecord, DagRefused, NodeConflict, StoreError, row_json

#: The fields `complete` may change; every other field of a stored node is fixed.
_COMPLETED = ("output", "status", "seq")


def _stored(conn: sqlite3.Connection, session_id: str, node_id: str) -> dict[str, object] | None:
    row = conn.execute(
        "SELECT data FROM nodes WHERE session_id = ? AND id = ?", (session_id, node_id)
    ).fetchone()
    if row is None:
        return None
    record = row_json(row[0], "node", node_id)
    return record if isinstance(record, dict) else {}


def _has(conn: sqlite3.Connection, session_id: str, node_id: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM nodes WHERE session_id = ? AND id = ?", (session_id, node_id)
    ).fetchone()
    return row is not None


def _edge_error(conn: sqlite3.Connection, session_id: str, call: Call) -> DagError | None:
    # The same checks as Graph.append, against the stored session, so load_graph can
    # always rebuild what was stored.
    if call.predecessor is not None and call.caller is not None:
        return ConflictingEdges(call.id, call.predecessor, call.caller)
    for edge, target in (("predecessor", call.predecessor), ("caller", call.caller)):
        if target is not None and not _has(conn, session_id, target):
            return UnknownNode(target, edge)
    missing = tuple(node_id for node_id in call.reads if not _has(conn, session_id, node_id))
    return UnknownReads(call.id, missing) if missing else None


def _without(record: dict[str, object], fields: tuple[str, ...]) -> dict[str, object]:
    return {key: value for key, value in record.items() if key not in fields}


def _insert(conn: sqlite3.Connection, session_id: str, call: Call) -> Result[int, StoreError]:
    error = _edge_error(conn, session_id, call)
    if error is not None:
        return Failure(DagRefused(session_id, error))
    row = conn.execute(
        "SELECT coalesce(max(seq), -1) + 1 FROM nodes WHERE session_id = ?", (session_id,)
    ).fetchone()
    seq = int(row[0])
    record = {**call_to_json(call), "seq": seq}
    conn.execute(
        "INSERT INTO nodes (session_id, id, seq, role, data) VALUES (?, ?, ?, ?, ?)",
        (session_id, call.id, seq, call.role.value, canonical_json(record)),
    )
    return Success(seq)


def append_node(conn: sqlite3.Connection, session_id: str, call: Call) -> Result[int, StoreError]:
    """Store ``call`` with the session's next seq; the same node again returns its seq.

    ``call.seq`` is ignored: the store assigns seqs, densely, in commit order.
    """
    stored = _stored(conn, session_id, call.id)
    if stored is None:
        return _insert(conn, session_id, call)
    if _without(stored, ("seq",)) == _without(call_to_json(call), ("seq",)):
        seq = stored.get("seq")
        return Success(seq if isinstance(seq, int) else -1)
    return Failure(NodeConflict(session_id, call.id))


def complete_node(
    conn: sqlite3.Connection, session_id: str, node_id: str, output: object, status: Status | str
) -> Result[None, StoreError]:
    """Fill a running node's output and final status, exactly once (as `Graph.complete`)."""
    stored = _stored(conn, session_id, node_id)
    if stored is None:
        return Failure(DagRefused(session_id, UnknownNode(node_id, "node_id")))
    if stored.get("status") != Status.RUNNING.value:
        return Failure(DagRefused(session_id, NotRunning(node_id, str(stored.get("status")))))
    if status not in (Status.DONE, Status.ERROR):
        error = InvalidValue("status", "'done' or 'error'", repr(status))
        return Failure(DagRefused(session_id, error))
    frozen = freeze(output, "output")
    if isinstance(frozen, Failure):
        return Failure(DagRefused(session_id, frozen.failure()))
    record = {**stored, "output": thaw(frozen.unwrap()), "status": Status(status).value}
    conn.execute(
        "UPDATE nodes SET data = ? WHERE session_id = ? AND id = ?",
        (canonical_json(record), session_id, node_id),
    )
    return Success(None)


def append_graph(
    conn: sqlite3.Connection, session_id: str, graph: Graph
) -> Result[int, StoreError]:
    """Make the session hold ``graph``: add its new nodes in seq order; the count added.

    A node already stored the same is skipped, and a stored running node that ``graph``
    has completed is completed, so storing a growing graph again is safe.
    """
    added = 0
    for node_id in graph.order:
        call = graph.nodes[node_id]
        stored = _stored(conn, session_id, node_id)
        if stored is None:
            inserted = _insert(conn, session_id, call)
            if isinstance(inserted, Failure):
                return Failure(inserted.failure())
            added += 1
            continue
        record = call_to_json(call)
        if _without(stored, ("seq",)) == _without(record, ("seq",)):
            continue
        if _without(stored, _COMPLETED) != _without(record, _COMPLETED):
            return Failure(NodeConflict(session_id, node_id))
        completed = complete_node(conn, session_id, node_id, call.output_value(), call.status)
        if isinstance(completed, Failure):
            return Failure(NodeConflict(session_id, node_id))
    return Success(added)


def load_graph(conn: sqlite3.Connection, session_id: str) -> Result[Graph, StoreError]:
    """Read the session's graph back in one pass (`graph_from_records`), every row checked."""
    rows = conn.execute(
        "SELECT id, seq, data FROM nodes WHERE session_id = ? ORDER BY seq", (session_id,)
    )
    # row_json raises DamagedRow for a row that is not JSON; `run` turns it into a Failure.
    records = ((str(i), seq, row_json(data, "node", str(i))) for i, seq, data in rows)
    return graph_from_records(records).alt(lambda bad: CorruptRecord("node", bad[0], bad[1]))
