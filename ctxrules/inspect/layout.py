"""Where each node of a session's DAG is drawn: a row per node in time, a lane per branch.

A node continues its predecessor's lane when it is that node's first child; a retry or an
edit (a later sibling) opens a new lane, so branches read as branches. Tool calls sit in
their caller's lane, one step to the right. Pure: the page only draws what this returns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from ctxrules.dag import Call, Graph, is_attach_pointer, is_merge_instruction

#: Node kinds the page draws apart (a legend names each).
KINDS = ("user", "assistant", "tool", "system", "retry", "edit", "attach", "merge")


def node_kind(call: Call) -> str:
    """What the page draws a node as: its role, or retry, edit, attach pointer, merge.

    >>> node_kind(Call("n", "user", metadata={"retry_of": "m"})), node_kind(Call("n", "tool"))
    ('retry', 'tool')
    """
    if is_attach_pointer(call):
        return "attach"
    if is_merge_instruction(call):
        return "merge"
    if "retry_of" in call.metadata:
        return "retry"
    if "edit_of" in call.metadata:
        return "edit"
    return call.role.value


@attrs.frozen
class Placed:
    """A node's place: its row (time order), lane (branch) and whether it is a callee."""

    node_id: str
    row: int
    lane: int
    callee: bool


def place(graph: Graph) -> tuple[list[Placed], int]:
    """Every node's place in seq order, and how many lanes were used; O(nodes).

    >>> from ctxrules.dag import Session
    >>> s = Session("s").send("user", "hi").unwrap().send("assistant", "a").unwrap()
    >>> s = s.retry(s.head).unwrap()
    >>> [(p.row, p.lane) for p in place(s.graph)[0]], place(s.graph)[1]
    ([(0, 0), (1, 0), (2, 1)], 2)
    """
    lanes: dict[str, int] = {}
    continued: set[str] = set()
    placed: list[Placed] = []
    used = 0
    for row, node_id in enumerate(graph.order):
        call = graph.nodes[node_id]
        parent = call.caller if call.caller is not None else call.predecessor
        if call.caller is not None and call.caller in lanes:
            lane = lanes[call.caller]
        elif parent is not None and parent in lanes and parent not in continued:
            lane = lanes[parent]
            continued.add(parent)
        else:
            lane = used
        used = max(used, lane + 1)
        lanes[node_id] = lane
        placed.append(Placed(node_id, row, lane, call.caller is not None))
    return placed, used


def place_window(
    ids: Sequence[str], nodes: Mapping[str, Call], first_child: Callable[[str], str | None]
) -> tuple[list[Placed], int]:
    """The places of consecutive nodes (rows from 0), in lanes as `place` gives the whole graph.

    A node continues its predecessor's lane when it is that node's first child (the same
    rule as `place`); a predecessor before the window is asked for its first child
    (``first_child``), and each lane coming in from before the window is numbered on first
    use. O(window), whatever the history before it.

    >>> from ctxrules.dag import Session
    >>> s = Session("s").send("user", "hi").unwrap().send("assistant", "a").unwrap()
    >>> s = s.retry(s.head).unwrap()
    >>> ids = list(s.graph.order)[1:]
    >>> first = lambda i: s.graph.children[i][0]
    >>> [(p.row, p.lane) for p in place_window(ids, s.graph.nodes, first)[0]]
    [(0, 0), (1, 1)]
    """
    inside = set(ids)
    lanes: dict[str, int] = {}
    continued: set[str] = set()
    placed: list[Placed] = []
    used = 0

    def lane_of(node_id: str) -> int:
        nonlocal used
        if node_id not in lanes:  # a lane coming in from before the window
            lanes[node_id], used = used, used + 1
        return lanes[node_id]

    for row, node_id in enumerate(ids):
        call = nodes[node_id]
        parent = call.predecessor
        if call.caller is not None:
            lane = lane_of(call.caller)
        elif parent is not None and parent in inside and parent not in continued:
            lane = lanes[parent]
            continued.add(parent)
        elif parent is not None and parent not in inside and first_child(parent) == node_id:
            lane = lane_of(parent)
        else:
            lane, used = used, used + 1
        used = max(used, lane + 1)
        lanes[node_id] = lane
        placed.append(Placed(node_id, row, lane, call.caller is not None))
    return placed, used


def window_edges(ids: Sequence[str], nodes: Mapping[str, Call]) -> list[tuple[str, str, str]]:
    """The edges of `edges` between nodes of the window (``nodes`` holds them)."""
    found: list[tuple[str, str, str]] = []
    for node_id in ids:
        call = nodes[node_id]
        if call.predecessor is not None and call.predecessor in nodes:
            found.append((call.predecessor, node_id, "next"))
        if call.caller is not None and call.caller in nodes:
            found.append((call.caller, node_id, "call"))
        if is_merge_instruction(call):
            found.extend(_merged(nodes, call))
    return found


def edges(graph: Graph) -> list[tuple[str, str, str]]:
    """Every edge to draw: (from, to, kind) with kind ``next``, ``call`` or ``merge``.

    A merge instruction's peers are commits of other sessions: the page names them on the
    node; within the session the instruction is joined to the attach pointers before it.
    """
    found: list[tuple[str, str, str]] = []
    for node_id in graph.order:
        call = graph.nodes[node_id]
        if call.predecessor is not None:
            found.append((call.predecessor, node_id, "next"))
        if call.caller is not None:
            found.append((call.caller, node_id, "call"))
        if is_merge_instruction(call):
            found.extend(_merged(graph.nodes, call))
    return found


def _merged(nodes: Mapping[str, Call], merge: Call) -> list[tuple[str, str, str]]:
    # The pointers a merge attached are its run of attach nodes right before it.
    joined: list[tuple[str, str, str]] = []
    current = nodes.get(merge.predecessor or "")
    while current is not None and is_attach_pointer(current):
        joined.append((current.id, merge.id, "merge"))
        current = nodes.get(current.predecessor or "")
    return joined[1:]  # the nearest pointer is already the merge's predecessor
