"""A session's graph read on demand: a resumed `Context` reads the nodes a turn touches, not its history.

`StoredGraph` is the source a store passes to the core's `Layered` maps: the first
``size`` nodes of a session (what was stored when it was opened), each node and each
edge list read when first asked for, in a read of its own, and kept. Nodes appended
after live in the graph's own maps, as in any graph.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol, TypeVar

from pyrsistent import PVector, pvector

from ctxrules.dag import Call, Graph
from ctxrules.dag.bulk import record_call
from ctxrules.dag.layered import Layered, LayeredIds, Outline
from ctxrules.store.errors import CorruptRecord, LazyReadFailed
from ctxrules.store.nodes import Edge, NodeTable

T = TypeVar("T")

#: Nodes read one by one before the rest are read in one pass (a walk, not a turn).
WALK_AFTER = 512
#: Ids asked for and not stored (each node appended asks whether its id is taken) before
#: the stored ids are read once to answer: a long-lived session stops paying a read for
#: each new node; one that lives a few turns never reads them all.
IDS_AFTER_MISSES = 64


class NodeRead(Protocol):
    """Runs a read of the node table in a transaction of its own; a failure raises `LazyReadFailed`."""

    def __call__(self, operation: str, work: Callable[[NodeTable], T], /) -> T:
        """The work's value."""
        ...


class StoredGraph:
    """The first ``size`` nodes of a stored session, each node and edge list read when first asked for.

    A node read back is decoded with the checks a whole graph's rows get (`record_call`)
    and must carry the id asked for and a seq below ``size``; a walk of every node reads
    them all in one pass. A read that fails raises `LazyReadFailed`.
    """

    __slots__ = (
        "_all_edges",
        "_edges",
        "_found",
        "_id_set",
        "_ids",
        "_misses",
        "_nodes",
        "_read",
        "_whole",
        "session_id",
        "size",
    )

    def __init__(self, read: NodeRead, session_id: str, size: int) -> None:
        self._read, self.session_id, self.size = read, session_id, size
        self._nodes: dict[str, Call | None] = {}
        self._edges: dict[tuple[Edge, str], PVector[str] | None] = {}
        self._ids: list[str] | None = None
        #: The stored ids as a set, read at the first id asked for that is not stored.
        self._id_set: frozenset[str] | None = None
        self._found, self._whole, self._all_edges = 0, False, False
        self._misses = 0

    def node(self, node_id: str) -> Call | None:
        """The stored node with this id (None if the session held none when opened)."""
        if node_id in self._nodes:
            return self._nodes[node_id]
        if not isinstance(node_id, str):
            return None
        if self._whole:
            return None
        if self._found >= WALK_AFTER:
            # A walk over many nodes: read them all in one pass rather than one by one.
            self.every_node()
            return self._nodes.get(node_id)
        if self._id_set is not None and node_id not in self._id_set:
            # Each node appended asks whether its id is taken: answered without a read.
            return None
        stored = self._read("read_node", lambda t: t.stored(self.session_id, node_id))
        if stored is None:
            self._misses += 1
            if self._misses >= IDS_AFTER_MISSES and self._id_set is None:
                # Ids the session does not hold (new nodes'): from now on the stored ids,
                # read once, answer such questions instead of a read for each new node.
                self._id_set = frozenset(self.ids())
        call = None
        if stored is not None and stored.seq < self.size:
            made = record_call(stored.record, stored.seq)
            if isinstance(made, str) or made.id != node_id:
                why = made if isinstance(made, str) else f"the row holds node {made.id!r}"
                raise LazyReadFailed(CorruptRecord("node", node_id, why))
            call = made
            self._found += 1
        self._nodes[node_id] = call
        return call

    def edges(self, edge: Edge, node_id: str) -> PVector[str] | None:
        """The ids hanging from ``node_id`` by ``edge``, in seq order (None when there are none)."""
        key = (edge, node_id)
        if key in self._edges:
            return self._edges[key]
        if self._whole:
            # Every node is in memory after a walk: the rest of the edges come from their
            # fields in one pass, not a read per node (a walk asks for every node's).
            if not self._all_edges:
                self._edges_from_nodes()
            return self._edges.setdefault(key, None)
        if self.node(node_id) is None:
            # A node appended since the session was opened: its edges are the graph's own.
            self._edges[key] = None
            return None
        found = self._read(
            "read_edges", lambda t: t.edge_ids(self.session_id, edge, node_id, self.size)
        )
        ids = pvector(found) if found else None
        self._edges[key] = ids
        return ids

    def _edges_from_nodes(self) -> None:
        found: dict[tuple[Edge, str], list[str]] = {}
        for node_id in self.every_node():
            call = self._nodes[node_id]
            assert call is not None  # noqa: S101 - every id of a whole read is a stored node
            if call.predecessor is not None:
                found.setdefault(("children", call.predecessor), []).append(node_id)
            if call.caller is not None:
                found.setdefault(("callees", call.caller), []).append(node_id)
        for key, ids in found.items():
            self._edges.setdefault(key, pvector(ids))
        self._all_edges = True

    def ids(self) -> list[str]:
        """Every stored node's id in seq order (read once)."""
        if self._ids is None:
            found = self._read("read_ids", lambda t: t.ids(self.session_id, self.size))
            self._ids = list(found)
        return self._ids

    def every_node(self) -> list[str]:
        """Every stored node's id in seq order, each node read in one pass (for a whole walk)."""
        if not self._whole:
            rows = self._read("read_graph", lambda t: list(t.scan(self.session_id)))
            for node_id, seq, record in rows:
                if seq < self.size and node_id not in self._nodes:
                    made = record_call(record, seq)
                    if isinstance(made, str):
                        raise LazyReadFailed(CorruptRecord("node", node_id, made))
                    self._nodes[node_id] = made
            self._whole = True
        return self.ids()

    def _edge_keys(self, edge: Edge) -> list[str]:
        field = "predecessor" if edge == "children" else "caller"
        return list(
            dict.fromkeys(
                key
                for node_id in self.every_node()
                if (key := getattr(self._nodes[node_id], field)) is not None
            )
        )

    def graph(self, roots: list[str]) -> Graph:
        """The graph over these nodes: maps that read them on demand, sharing this source."""
        return Graph(
            nodes=Layered(self.node, self.every_node, size=self.size),
            children=Layered(partial(self.edges, "children"), partial(self._edge_keys, "children")),
            callees=Layered(partial(self.edges, "callees"), partial(self._edge_keys, "callees")),
            roots=pvector(roots),
            order=LayeredIds(
                self.size, self.ids, handle_owners=self.handle_owners, outline=self.outline
            ),
        )

    def outline(self) -> list[Outline]:
        """The stored nodes' outlines in seq order, in one read of their own."""
        return self._read("read_outline", lambda t: t.outline(self.session_id, self.size))

    def handle_owners(self, handle: str) -> tuple[str, ...] | None:
        """The stored nodes whose recall handle is ``handle``, by index; None if unknown."""
        found = self._read(
            "read_handle", lambda t: t.handle_owners(self.session_id, handle, self.size)
        )
        return None if found is None else tuple(found)
