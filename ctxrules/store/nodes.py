"""Node rules on either backend: append with the next seq, complete once, rebuild in seq order.

A backend's `NodeTable` holds only its SQL and its encoding of a node row; the checks
that keep the stored graph one that `Graph.append` can rebuild are here, once. Every
function runs inside the caller's transaction, with the session held for writing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, Protocol

import attrs
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
from ctxrules.dag.bulk import graph_from_records, record_call
from ctxrules.dag.layered import Outline
from ctxrules.generation import node_text
from ctxrules.store.errors import CorruptRecord, DagRefused, DamagedRow, NodeConflict, StoreError
from ctxrules.store.rows import Query, Rows, in_batches, placeholders

#: The fields a completion may change; every other field of a stored node is fixed.
COMPLETED = ("output", "status", "seq")
#: The two edges a node hangs by, as `NodeTable.edge_ids` names them, and their record fields.
Edge = Literal["children", "callees"]
EDGES: dict[str, str] = {"children": "predecessor", "callees": "caller"}
#: The node sets a table finds by partial index.
Mark = Literal["running", "roots"]


class GraphQueries:
    """The reads a graph resumed on demand makes, over a backend's SQL for a record's field.

    A backend gives `field` (a record field as SQL: the text of its expression index, so the
    planner uses it) and `running` (its running nodes' condition, that of its partial index).
    """

    __slots__ = ()
    rows: Rows

    def field(self, name: str) -> str:
        """The SQL of the record's field ``name``."""
        raise NotImplementedError

    def running(self) -> str:
        """The SQL condition of a running node."""
        raise NotImplementedError

    def edge(self) -> str | None:
        """The SQL of the one index over the edge each node has, or None (an index per edge).

        A node has a predecessor or a caller, never both, so one index of the edge it has
        finds a node's children and callees alike; with two, each node's write changed a
        page of each (issue 27: about five of the ~54 log pages an agent turn wrote).
        """
        return None

    def edge_ids(self, session_id: str, edge: Edge, node_id: str, below: int) -> list[str]:
        """Ids of the nodes under seq ``below`` whose ``edge`` is ``node_id``, in seq order (by index).

        With one index over both edges (`edge`), the nodes hanging from ``node_id`` by either
        are found by it, then those by ``edge`` kept.
        """
        # No seq in the query: with it, the planner walks the seq index instead of the edge's.
        field = self.field(EDGES[edge])
        either = self.edge()
        if either is None:
            sql = f"SELECT seq, id FROM nodes WHERE session_id = ? AND {field} = ?"  # noqa: S608 - constants of the backend
            found = sorted(self.rows.all(sql, (session_id, node_id)))
        else:
            sql = f"SELECT seq, id FROM nodes WHERE session_id = ? AND {either} = ? AND {field} = ?"  # noqa: S608 - constants of the backend
            found = sorted(self.rows.all(sql, (session_id, node_id, node_id)))
        return [str(row[1]) for row in found if row[0] < below]

    def metadata_column(self) -> str:
        """The SQL of a column holding a record's metadata (decoded by `metadata_of`)."""
        raise NotImplementedError

    def metadata_of(self, node_id: str, value: object) -> Mapping[str, object]:
        """A record's metadata from the value of `metadata_column`."""
        raise NotImplementedError

    def outline(self, session_id: str, below: int) -> list[Outline]:
        """Every node under seq ``below`` without its texts: id, edges, status, metadata; seq order.

        What a walk over a long session's edges and metadata needs (a framework adapter's
        synced keys), read in one statement instead of every record decoded.
        """
        sql = (
            f"SELECT id, {self.field('predecessor')}, {self.field('caller')},"  # noqa: S608 - constants of the backend
            f" {self.field('status')}, {self.metadata_column()}"
            " FROM nodes WHERE session_id = ? AND seq < ? ORDER BY seq"
        )
        return [
            outline_of(
                str(node_id), predecessor, caller, status, self.metadata_of(str(node_id), metadata)
            )
            for node_id, predecessor, caller, status, metadata in self.rows.all(
                sql, (session_id, below)
            )
        ]

    def marked(self, session_id: str, mark: Mark, below: int) -> list[str]:
        """Ids of the session's running nodes, or its roots, under seq ``below`` (by partial index)."""
        roots = f"{self.field('predecessor')} IS NULL AND {self.field('caller')} IS NULL"
        where = self.running() if mark == "running" else roots
        sql = f"SELECT id FROM nodes WHERE session_id = ? AND {where} AND seq < ? ORDER BY seq"  # noqa: S608 - constants
        return [str(row[0]) for row in self.rows.all(sql, (session_id, below))]

    def handle_owners(self, session_id: str, handle: str, below: int) -> list[str] | None:
        """Ids of the nodes under seq ``below`` whose recall handle is ``handle`` (by index).

        None when a node under ``below`` was stored without its handle (before the schema
        kept it): the answer would be incomplete.
        """
        # Any row of the session (not only those under ``below``): a bound on seq would
        # make the planner walk the seq index instead of probing the handle's.
        missing = self.rows.one(
            "SELECT 1 FROM nodes WHERE session_id = ? AND handle IS NULL LIMIT 1", (session_id,)
        )
        if missing is not None:
            return None
        sql = "SELECT seq, id FROM nodes WHERE session_id = ? AND handle = ?"
        found = sorted(self.rows.all(sql, (session_id, handle)))
        return [str(row[1]) for row in found if row[0] < below]

    def ids(self, session_id: str, below: int) -> list[str]:
        """The session's node ids under seq ``below``, in seq order."""
        sql = "SELECT id FROM nodes WHERE session_id = ? AND seq < ? ORDER BY seq"
        return [str(row[0]) for row in self.rows.all(sql, (session_id, below))]


@attrs.frozen
class StoredNode:
    """A stored node as its table decodes it: its JSON record without the seq, and the seq."""

    record: dict[str, object]
    seq: int


class NodeTable(Protocol):
    """A backend's node rows inside one transaction: its SQL and how it encodes a node."""

    rows: Rows

    def stored(self, session_id: str, node_id: str) -> StoredNode | None:
        """The stored node with this id, or None."""
        ...

    def insert(self, session_id: str, call: Call) -> int:
        """Insert ``call`` with the session's next seq (its edges checked); that seq."""
        ...

    def add(self, session_id: str, call: Call, seq: int) -> None:
        """Insert ``call`` with ``seq``, the next one (read under the caller's hold), its edges checked."""
        ...

    def stored_query(self, session_id: str, ids: Sequence[str]) -> Query:
        """The query of the stored nodes among ``ids``, each row read by `stored_row`."""
        ...

    def stored_row(self, row: Sequence[object]) -> tuple[str, StoredNode]:
        """A row of `stored_query`: the node's id and the node."""
        ...

    def complete(self, session_id: str, node_id: str, done: StoredNode) -> None:
        """Rewrite a running node's row with its completed record."""
        ...

    def scan(self, session_id: str) -> Iterable[tuple[str, int, object]]:
        """Every node's id, seq and JSON record (seq included), in seq order."""
        ...

    def outline(self, session_id: str, below: int) -> list[Outline]:
        """Every node under seq ``below`` without its texts, in seq order."""
        ...

    def edge_ids(self, session_id: str, edge: Edge, node_id: str, below: int) -> list[str]:
        """Ids of the nodes under seq ``below`` whose ``edge`` is ``node_id``, in seq order."""
        ...

    def marked(self, session_id: str, mark: Mark, below: int) -> list[str]:
        """Ids of the session's running nodes, or its roots, under seq ``below``."""
        ...

    def handle_owners(self, session_id: str, handle: str, below: int) -> list[str] | None:
        """Ids of the nodes under seq ``below`` with this recall handle; None if one lacks a handle."""
        ...

    def ids(self, session_id: str, below: int) -> list[str]:
        """The session's node ids under seq ``below``, in seq order."""
        ...


def fixed_text(record: dict[str, object]) -> str:
    """The canonical JSON of the fields of a node record that never change."""
    return canonical_json({k: v for k, v in record.items() if k not in COMPLETED})


def same_node(stored: StoredNode, call: Call) -> bool:
    """Whether the stored node is exactly ``call`` (its seq aside): a retried write."""
    record = {k: v for k, v in call_to_json(call).items() if k != "seq"}
    return canonical_json(stored.record) == canonical_json(record)


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


#: The next seq of a session's nodes, read under the writer's hold.
NEXT_SEQ = "SELECT coalesce(max(seq), -1) + 1 FROM nodes WHERE session_id = ?"


def present_query(session_id: str, ids: Sequence[str]) -> Query:
    """The query of which of ``ids`` (at most a batch of `in_batches`) the session stores."""
    sql = f"SELECT id FROM nodes WHERE session_id = ? AND id IN ({placeholders(len(ids))})"  # noqa: S608 - only placeholders
    return sql, (session_id, *ids)


def missing_nodes(rows: Rows, session_id: str, ids: Sequence[str]) -> set[str]:
    """Which of ``ids`` the session does not store."""
    found: set[str] = set()
    for batch in in_batches(list(dict.fromkeys(ids))):
        found.update(str(row[0]) for row in rows.all(*present_query(session_id, batch)))
    return set(ids) - found


def _insert(table: NodeTable, session_id: str, call: Call) -> Result[int, StoreError]:
    # The same checks as Graph.append, against the stored session, so load_graph can
    # always rebuild what was stored.
    error = edge_error(call, missing_nodes(table.rows, session_id, edge_targets(call)))
    if error is not None:
        return Failure(DagRefused(session_id, error))
    return Success(table.insert(session_id, call))


def append_node(table: NodeTable, session_id: str, call: Call) -> Result[int, StoreError]:
    """Store ``call`` with the session's next seq; the same node again returns its seq.

    ``call.seq`` is ignored: the store assigns seqs, densely, in commit order.
    """
    stored = table.stored(session_id, call.id)
    if stored is None:
        return _insert(table, session_id, call)
    if same_node(stored, call):
        return Success(stored.seq)
    return Failure(NodeConflict(session_id, call.id))


def completion(
    stored: StoredNode | None, session_id: str, node_id: str, output: object, status: Status | str
) -> Result[StoredNode, StoreError]:
    """The stored node as its completion leaves it, or why it cannot be (as `Graph.complete`)."""
    if stored is None:
        return Failure(DagRefused(session_id, UnknownNode(node_id, "node_id")))
    if stored.record.get("status") != Status.RUNNING.value:
        found = str(stored.record.get("status"))
        return Failure(DagRefused(session_id, NotRunning(node_id, found)))
    if status not in (Status.DONE, Status.ERROR):
        error = InvalidValue("status", "'done' or 'error'", repr(status))
        return Failure(DagRefused(session_id, error))
    frozen = freeze(output, "output")
    if isinstance(frozen, Failure):
        return Failure(DagRefused(session_id, frozen.failure()))
    done = {**stored.record, "output": thaw(frozen.unwrap()), "status": Status(status).value}
    return Success(StoredNode(done, stored.seq))


def complete_node(
    table: NodeTable, session_id: str, node_id: str, output: object, status: Status | str
) -> Result[None, StoreError]:
    """Fill a running node's output and final status, exactly once (as `Graph.complete`)."""
    stored = table.stored(session_id, node_id)
    done = completion(stored, session_id, node_id, output, status)
    return done.map(lambda node: table.complete(session_id, node_id, node))


#: Nodes of a graph planned from one batch of reads (one round trip on PostgreSQL).
GRAPH_PART = 500


def append_graph(table: NodeTable, session_id: str, graph: Graph) -> Result[int, StoreError]:
    """Make the session hold ``graph``: add its new nodes in seq order; the count added.

    A node already stored the same is skipped, and a stored running node that ``graph``
    has completed is completed, so storing a growing graph again is safe. The nodes go in
    parts of `GRAPH_PART`, each planned from one batch of reads (those stored, the edge
    targets stored, the next seq): a copy costs a few statements a part, not three a node.
    """
    added = 0
    order = list(graph.order)
    for start in range(0, len(order), GRAPH_PART):
        part = [graph.nodes[node_id] for node_id in order[start : start + GRAPH_PART]]
        done = _append_part(table, session_id, part)
        if isinstance(done, Failure):
            return done
        added += done.unwrap()
    return Success(added)


def _append_part(
    table: NodeTable, session_id: str, part: Sequence[Call]
) -> Result[int, StoreError]:
    """`append_graph`'s work for consecutive nodes of the graph, from one batch of reads."""
    ids = [call.id for call in part]
    targets = sorted({t for call in part for t in edge_targets(call)} - set(ids))
    stored_queries = [table.stored_query(session_id, b) for b in in_batches(ids)]
    present_queries = [present_query(session_id, b) for b in in_batches(targets)]
    answers = table.rows.reads([*stored_queries, *present_queries, (NEXT_SEQ, (session_id,))])
    stored = dict(table.stored_row(row) for rows in answers[: len(stored_queries)] for row in rows)
    present = {str(row[0]) for rows in answers[len(stored_queries) : -1] for row in rows}
    present |= set(stored)
    seq = int(answers[-1][0][0]) if answers[-1] else 0
    added = 0
    for call in part:
        found = stored.get(call.id)
        if found is None:
            # The same checks as Graph.append, against the stored session, so load_graph
            # can always rebuild what was stored.
            error = edge_error(call, set(edge_targets(call)) - present)
            if error is not None:
                return Failure(DagRefused(session_id, error))
            table.add(session_id, call, seq)
            present.add(call.id)
            seq, added = seq + 1, added + 1
            continue
        if same_node(found, call):
            continue
        if fixed_text(found.record) != fixed_text(call_to_json(call)):
            return Failure(NodeConflict(session_id, call.id))
        done = completion(found, session_id, call.id, call.output_value(), call.status)
        if isinstance(done, Failure):
            return Failure(NodeConflict(session_id, call.id))
        table.complete(session_id, call.id, done.unwrap())
    return Success(added)


def load_graph(table: NodeTable, session_id: str) -> Result[Graph, StoreError]:
    """Read the session's graph back in one pass (`graph_from_records`), every row checked."""
    built = graph_from_records(table.scan(session_id))
    return built.alt(lambda bad: CorruptRecord("node", bad[0], bad[1]))


#: Above every seq a store gives out (PostgreSQL's are bigint): "any node of the session".
ANY_SEQ = 2**62


def handle_original(
    table: NodeTable, session_id: str, handle: str
) -> Result[str | None, StoreError]:
    """The text of the session's node with recall handle ``handle`` (the first, by seq), or None.

    What an offloaded copy would hold: a stored node is whole, so its original needs no copy.
    """
    owners = table.handle_owners(session_id, handle, ANY_SEQ)
    stored = table.stored(session_id, owners[0]) if owners else None
    if stored is None:
        return Success(None)
    call = record_call(stored.record, stored.seq)
    if isinstance(call, str):
        return Failure(CorruptRecord("node", handle, call))
    return Success(node_text(call.output))


def outline_of(
    node_id: str, predecessor: object, caller: object, status: object, metadata: object
) -> Outline:
    """A node's outline from the values a backend read, or `DamagedRow` saying which is wrong."""
    if not all(edge is None or isinstance(edge, str) for edge in (predecessor, caller)):
        raise DamagedRow("node", node_id, "its edges are not ids")
    if not isinstance(status, str) or not isinstance(metadata, dict):
        raise DamagedRow("node", node_id, "its status or metadata is not of its kind")
    return Outline(node_id, predecessor, caller, status, metadata)  # type: ignore[arg-type]
