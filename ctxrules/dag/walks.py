"""Read-only walks over a `Graph`: branches, siblings, turns and what an LLM call reads."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping

from ctxrules.dag.call import Call, Role
from ctxrules.dag.graph import Graph


def ancestors(graph: Graph, head: str | None) -> Iterator[Call]:
    """Walk from ``head`` back to the root along predecessors, newest first."""
    node = graph.get(head) if head is not None else None
    while node is not None:
        yield node
        node = graph.get(node.predecessor) if node.predecessor is not None else None


def branch(graph: Graph, head: str | None) -> tuple[Call, ...]:
    """The conversation from the root to ``head`` along predecessors (empty for no head).

    >>> from ctxrules.dag.session import Session
    >>> s = Session("d").send("user", "q").bind(lambda s: s.send("assistant", "a")).unwrap()
    >>> [c.output for c in branch(s.graph, s.head)]
    ['q', 'a']
    """
    return tuple(reversed(tuple(ancestors(graph, head))))


def siblings(graph: Graph, node_id: str) -> tuple[Call, ...]:
    """Every node sharing ``node_id``'s predecessor (or caller, or rootness), itself included."""
    node = graph.get(node_id)
    if node is None:
        return ()
    if node.predecessor is not None:
        ids = graph.children_of(node.predecessor)
    elif node.caller is not None:
        ids = graph.callees_of(node.caller)
    else:
        ids = graph.roots
    return tuple(graph.nodes[i] for i in ids)


def last_user_message(graph: Graph, head: str | None) -> Call | None:
    """The nearest user message at or before ``head`` on its branch."""
    return next((c for c in ancestors(graph, head) if c.role is Role.USER), None)


def linear_back_to(graph: Graph, target: str) -> tuple[Call, ...]:
    """Every node appended at or after ``target``, in seq order (empty if unknown)."""
    node = graph.get(target)
    if node is None:
        return ()
    return tuple(graph.nodes[i] for i in graph.order[node.seq :])


def _latest_descendant(graph: Graph, start: str) -> str:
    # A branch continues along its newest child; a later retry supersedes an earlier one.
    current = start
    while children := graph.children_of(current):
        current = children[-1]
    return current


def branch_terminals(graph: Graph, spawn_id: str) -> tuple[Call, ...]:
    """For each branch a spawn node started (its callees), the node that branch ends at."""
    return tuple(
        graph.nodes[_latest_descendant(graph, start)] for start in graph.callees_of(spawn_id)
    )


def branch_internal(graph: Graph, spawn_id: str, terminal_id: str) -> tuple[Call, ...]:
    """The nodes of one spawned branch, from its first node to ``terminal_id``, in order."""
    chain: list[Call] = []
    for node in ancestors(graph, terminal_id):
        chain.append(node)
        if node.caller == spawn_id:
            return tuple(reversed(chain))
    return ()


def fold_history(graph: Graph, head: str | None) -> tuple[Call, ...]:
    """The branch with each earlier turn folded to its user message and final assistant reply.

    The current turn (from the last user message to ``head``) is kept whole.
    """
    calls = branch(graph, head)
    starts = [i for i, call in enumerate(calls) if call.role is Role.USER]
    if not starts:
        return calls
    folded: list[Call] = list(calls[: starts[0]])
    for begin, end in itertools.pairwise(starts):
        turn = calls[begin:end]
        folded.append(turn[0])
        final = next((c for c in reversed(turn) if c.role is Role.ASSISTANT), None)
        if final is not None:
            folded.append(final)
    folded.extend(calls[starts[-1] :])
    return tuple(folded)


def _hidden_by_expose(graph: Graph, visible: list[Call], frame_id: str | None) -> set[str]:
    # expose="io" (the default) hides the LLM calls made inside a function call; the
    # current frame is exempt because a frame always sees its own progress.
    hidden: set[str] = set()
    for call in visible:
        if call.role is not Role.TOOL or call.id == frame_id:
            continue
        if call.metadata.get("expose", "io") == "full":
            continue
        hidden.update(i for i in graph.callees_of(call.id) if graph.nodes[i].role is Role.ASSISTANT)
    return hidden


def compute_reads(
    graph: Graph,
    head_seq: int,
    frame_entry_seq: int | None = None,
    render_range: Mapping[str, int | None] | None = None,
) -> tuple[str, ...]:
    """Ids an LLM call at ``head_seq`` reads, in seq order, after ``expose`` and ``render_range``.

    At top level that is every node up to ``head_seq``. Inside a function frame entered at
    ``frame_entry_seq``, ``render_range["callers"]`` keeps at most that many nodes from
    before the frame (None: all, 0: isolated) and ``render_range["subcalls"]`` at most that
    many in-frame nodes (-1: all).
    """
    limits = render_range or {}
    upto = [graph.nodes[i] for i in graph.order[: max(head_seq + 1, 0)]]
    if frame_entry_seq is None:
        before, inside, frame_id = upto, [], None
    else:
        before = upto[:frame_entry_seq]
        inside = upto[frame_entry_seq:]
        frame_id = inside[0].id if inside else None
        callers = limits.get("callers")
        if callers is not None:
            before = before[max(len(before) - callers, 0) :] if callers > 0 else []
        subcalls = limits.get("subcalls", -1)
        if subcalls is not None and subcalls >= 0:
            inside = inside[max(len(inside) - subcalls, 0) :] if subcalls > 0 else []
    visible = before + inside
    hidden = _hidden_by_expose(graph, visible, frame_id)
    return tuple(call.id for call in visible if call.id not in hidden)
