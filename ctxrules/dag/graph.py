"""The append-only history graph: nodes by id plus the indexes the walks need."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from immutables import Map
from pyrsistent import PVector, pvector
from returns.result import Failure, Result, Success

from ctxrules.dag.call import Call, Status
from ctxrules.dag.errors import (
    ConflictingEdges,
    DagError,
    DuplicateNode,
    InvalidValue,
    NotRunning,
    UnknownNode,
    UnknownReads,
)
from ctxrules.dag.ids import EMPTY_IDS, IdVector, id_vector
from ctxrules.dag.layered import Layered, LayeredIds
from ctxrules.dag.payload import freeze

_EMPTY: PVector[str] = pvector()

#: Nodes by id: a HAMT, or over a store's nodes read on demand (a resumed session).
NodeMap = Map[str, Call] | Layered[str, Call]
#: Ids by the id they hang from (predecessor or caller), in seq order.
EdgeIndex = Map[str, PVector[str]] | Layered[str, PVector[str]]


@attrs.frozen
class Graph:
    """A persistent DAG of `Call` nodes; every operation returns a new graph or a `DagError`.

    ``children`` indexes nodes by predecessor, ``callees`` by caller, ``order`` by seq
    (``order[seq]`` is the node id), ``roots`` lists nodes with neither edge. The maps are
    HAMTs and ``order`` a chunked vector: an append's new versions are a few small objects,
    where a flat persistent map or vector is one object the cyclic GC walks whole each time
    it meets a new, young version. A store resuming a long session passes `Layered` maps
    and `LayeredIds` instead: its nodes and edges are read when first touched.
    """

    nodes: NodeMap = attrs.field(factory=Map)
    children: EdgeIndex = attrs.field(factory=Map)
    callees: EdgeIndex = attrs.field(factory=Map)
    roots: PVector[str] = _EMPTY
    order: IdVector | LayeredIds = attrs.field(default=EMPTY_IDS, converter=id_vector)

    def __len__(self) -> int:
        return len(self.order)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.nodes

    @property
    def next_seq(self) -> int:
        """The seq the next appended node receives."""
        return len(self.order)

    def get(self, node_id: str) -> Call | None:
        """The node with this id, or None."""
        return self.nodes.get(node_id)

    def require(self, node_id: str, field: str = "node_id") -> Result[Call, DagError]:
        """The node with this id, or `UnknownNode` naming the argument it came from."""
        node = self.nodes.get(node_id)
        return Success(node) if node is not None else Failure(UnknownNode(node_id, field))

    def children_of(self, node_id: str) -> PVector[str]:
        """Ids of the nodes whose predecessor is ``node_id``, in seq order."""
        return self.children.get(node_id, _EMPTY)

    def callees_of(self, node_id: str) -> PVector[str]:
        """Ids of the nodes whose caller is ``node_id``, in seq order."""
        return self.callees.get(node_id, _EMPTY)

    def append(self, call: Call) -> Result[Graph, DagError]:
        """Add ``call`` with the next seq; fail without change on a bad id or edge.

        >>> g = Graph().append(Call("u1", "user", output="hi")).unwrap()
        >>> g.nodes["u1"].seq, len(g)
        (0, 1)
        >>> print(g.append(Call("a1", "assistant", predecessor="nope")).failure())
        unknown node 'nope' given as predecessor
        """
        error = self._check_new(call)
        if error is not None:
            return Failure(error)
        # A shallow copy with only seq set: the payloads were frozen when the call was made,
        # and attrs.evolve would walk and re-freeze them all again. A call made with this
        # seq already (as a session makes each) is the node itself: nodes never change.
        seq = self.next_seq
        node = call if call.seq == seq else call.with_frozen(seq=seq)
        children, callees, roots = self.children, self.callees, self.roots
        if node.predecessor is not None:
            children = children.set(
                node.predecessor, children.get(node.predecessor, _EMPTY).append(node.id)
            )
        elif node.caller is not None:
            callees = callees.set(node.caller, callees.get(node.caller, _EMPTY).append(node.id))
        else:
            roots = roots.append(node.id)
        return Success(
            Graph(
                nodes=self.nodes.set(node.id, node),
                children=children,
                callees=callees,
                roots=roots,
                order=self.order.append(node.id),
            )
        )

    def _check_new(self, call: Call) -> DagError | None:
        return new_node_problem(call, self.nodes)

    def complete(
        self, node_id: str, output: object, status: Status | str = Status.DONE
    ) -> Result[Graph, DagError]:
        """Fill a running node's output and final status; the only change to an existing node.

        >>> g = Graph().append(Call("t", "tool", status="running")).unwrap()
        >>> g.complete("t", {"ok": True}).unwrap().nodes["t"].output_value()
        {'ok': True}
        >>> print(g.complete("t", 1).unwrap().complete("t", 2).failure())
        cannot complete node 't': its status is 'done', only a 'running' node is completed, exactly once
        """
        node = self.nodes.get(node_id)
        if node is None:
            return Failure(UnknownNode(node_id, "node_id"))
        if node.status is not Status.RUNNING:
            return Failure(NotRunning(node_id, node.status.value))
        if status not in (Status.DONE, Status.ERROR):
            return Failure(InvalidValue("status", "'done' or 'error'", repr(status)))
        final = Status(status)
        return freeze(output, "output").map(
            lambda frozen: attrs.evolve(
                self,
                nodes=self.nodes.set(node_id, node.with_frozen(output=frozen, status=final)),
            )
        )


def new_node_problem(call: Call, nodes: Mapping[str, Call]) -> DagError | None:
    """Why ``call`` cannot join a graph holding ``nodes`` (its id taken, an edge unknown), or None."""
    if call.id in nodes:
        return DuplicateNode(call.id)
    if call.predecessor is not None and call.caller is not None:
        return ConflictingEdges(call.id, call.predecessor, call.caller)
    if call.predecessor is not None and call.predecessor not in nodes:
        return UnknownNode(call.predecessor, "predecessor")
    if call.caller is not None and call.caller not in nodes:
        return UnknownNode(call.caller, "caller")
    missing = tuple(node_id for node_id in call.reads if node_id not in nodes)
    if missing:
        return UnknownReads(call.id, missing)
    return None
