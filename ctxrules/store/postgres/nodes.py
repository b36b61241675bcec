"""Node rows in PostgreSQL: append with the next seq, complete once, rebuild in seq order.

A row splits a node into ``fixed`` (canonical JSON of every field but output, status and
seq), ``output`` and ``status``, so the database checks a completion by comparing text.
Every function runs inside the caller's transaction, after `lock_session` for writes.
"""

from __future__ import annotations

import json

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
from ctxrules.store.errors import CorruptRecord, DagRefused, NodeConflict, StoreError
from ctxrules.store.postgres.connection import Conn
from ctxrules.store.postgres.words import body_text, words

_SPLIT = ("output", "status", "seq")


def _fixed(record: dict[str, object]) -> str:
    return canonical_json({k: v for k, v in record.items() if k not in _SPLIT})


def _stored(conn: Conn, session_id: str, node_id: str) -> tuple[str, str, str, int] | None:
    row = conn.execute(
        "SELECT fixed, output, status, seq FROM nodes WHERE session_id = %s AND id = %s",
        (session_id, node_id),
    ).fetchone()
    return None if row is None else (row[0], row[1], row[2], row[3])


def _missing(conn: Conn, session_id: str, ids: list[str]) -> set[str]:
    if not ids:
        return set()
    rows = conn.execute(
        "SELECT id FROM nodes WHERE session_id = %s AND id = ANY(%s)", (session_id, ids)
    ).fetchall()
    return set(ids) - {row[0] for row in rows}


def edge_targets(call: Call) -> list[str]:
    """The ids ``call``'s edges name: predecessor, caller and reads."""
    return [t for t in (call.predecessor, call.caller) if t is not None] + list(call.reads)


def edge_error(call: Call, missing: set[str]) -> DagError | None:
    """What `Graph.append` would refuse, given which edge targets the session lacks."""
    if call.predecessor is not None and call.caller is not None:
        return ConflictingEdges(call.id, call.predecessor, call.caller)
    for edge, target in (("predecessor", call.predecessor), ("caller", call.caller)):
        if target is not None and target in missing:
            return UnknownNode(target, edge)
    unread = tuple(node_id for node_id in call.reads if node_id in missing)
    return UnknownReads(call.id, unread) if unread else None


def _edge_error(conn: Conn, session_id: str, call: Call) -> DagError | None:
    # The same checks as Graph.append, against the stored session, so load_graph can
    # always rebuild what was stored.
    return edge_error(call, _missing(conn, session_id, edge_targets(call)))


def insert_statement(session_id: str, call: Call) -> tuple[str, tuple[object, ...]]:
    """The INSERT of ``call`` with the session's next seq (read in the statement), and its values."""
    record = call_to_json(call)
    body = body_text(record)
    params = (
        session_id,
        call.id,
        call.role.value,
        call.status.value,
        _fixed(record),
        canonical_json(record["output"]),
        body.replace("\x00", ""),
        words(body),
        session_id,
    )
    return _INSERT, params


def same_as_stored(stored: tuple[str, str, str, int], call: Call) -> bool:
    """Whether a stored row holds exactly ``call`` (its seq aside): a retried write."""
    record = call_to_json(call)
    return stored[:3] == (_fixed(record), canonical_json(record["output"]), record["status"])


# The next seq is read in the insert itself: one round trip, under the session's lock.
_INSERT = (
    "INSERT INTO nodes (session_id, id, seq, role, status, fixed, output, body, words)"
    " SELECT %s, %s, coalesce(max(seq), -1) + 1, %s, %s, %s, %s, %s, %s"
    " FROM nodes WHERE session_id = %s RETURNING seq"
)


def _insert(conn: Conn, session_id: str, call: Call) -> Result[int, StoreError]:
    error = _edge_error(conn, session_id, call)
    if error is not None:
        return Failure(DagRefused(session_id, error))
    row = conn.execute(*insert_statement(session_id, call)).fetchone()
    seq = int(row[0]) if row is not None else 0
    return Success(seq)


def append_node(conn: Conn, session_id: str, call: Call) -> Result[int, StoreError]:
    """Store ``call`` with the session's next seq; the same node again returns its seq."""
    stored = _stored(conn, session_id, call.id)
    if stored is None:
        return _insert(conn, session_id, call)
    if same_as_stored(stored, call):
        return Success(stored[3])
    return Failure(NodeConflict(session_id, call.id))


def complete_node(
    conn: Conn, session_id: str, node_id: str, output: object, status: Status | str
) -> Result[None, StoreError]:
    """Fill a running node's output and final status, exactly once (as `Graph.complete`)."""
    stored = _stored(conn, session_id, node_id)
    if stored is None:
        return Failure(DagRefused(session_id, UnknownNode(node_id, "node_id")))
    if stored[2] != Status.RUNNING.value:
        return Failure(DagRefused(session_id, NotRunning(node_id, stored[2])))
    if status not in (Status.DONE, Status.ERROR):
        error = InvalidValue("status", "'done' or 'error'", repr(status))
        return Failure(DagRefused(session_id, error))
    frozen = freeze(output, "output")
    if isinstance(frozen, Failure):
        return Failure(DagRefused(session_id, frozen.failure()))
    record = {**json.loads(stored[0]), "output": thaw(frozen.unwrap())}
    body = body_text(record)
    conn.execute(
        "UPDATE nodes SET output = %s, status = %s, body = %s, words = %s"
        " WHERE session_id = %s AND id = %s",
        (
            canonical_json(record["output"]),
            Status(status).value,
            body.replace("\x00", ""),
            words(body),
            session_id,
            node_id,
        ),
    )
    return Success(None)


def append_graph(conn: Conn, session_id: str, graph: Graph) -> Result[int, StoreError]:
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
        if same_as_stored(stored, call):
            continue
        if stored[0] != _fixed(call_to_json(call)):
            return Failure(NodeConflict(session_id, node_id))
        completed = complete_node(conn, session_id, node_id, call.output_value(), call.status)
        if isinstance(completed, Failure):
            return Failure(NodeConflict(session_id, node_id))
    return Success(added)


def load_graph(conn: Conn, session_id: str) -> Result[Graph, StoreError]:
    """Read the session's graph back in one pass (`graph_from_records`), every row checked."""
    rows = conn.execute(
        "SELECT id, seq, fixed, output, status FROM nodes WHERE session_id = %s ORDER BY seq",
        (session_id,),
    )
    records = []
    for node_id, seq, fixed, output, status in rows:
        try:
            record = {**json.loads(fixed), "output": json.loads(output), "status": status}
        except (json.JSONDecodeError, TypeError) as err:
            return Failure(CorruptRecord("node", node_id, str(err)))
        records.append((str(node_id), seq, {**record, "seq": seq}))
    return graph_from_records(records).alt(lambda bad: CorruptRecord("node", bad[0], bad[1]))
