"""Build commits from the DAG: new branch nodes become full items, then the pipeline runs."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Protocol, Self, TypeVar

import attrs
from pyrsistent import PMap, PVector, pmap
from returns.result import Failure, Result, Success

# Imported as a module: render imports commit, so a name import here would be circular.
import ctxrules.render.item as item_rendering
from ctxrules.canonical import canonical_json
from ctxrules.commit.attach import expand_pointer
from ctxrules.commit.commit import ContextCommit
from ctxrules.commit.errors import CommitError, NotAnAncestor, UnknownHead
from ctxrules.commit.item import ContextItem
from ctxrules.dag import (
    Call,
    Frozen,
    Graph,
    Role,
    Status,
    ancestors,
    is_attach_pointer,
    is_merge_instruction,
    thaw,
)
from ctxrules.rules import Facts, Pipeline

#: Commits of one session by the head node they were built for.
CommitMap = PMap[str, ContextCommit]
#: A session with no commits yet.
NO_COMMITS: CommitMap = pmap()


class CommitIndex(Protocol):
    """Any persistent map of commits by head node: a `CommitMap`, an ``immutables.Map``.

    The engine keeps an ``immutables.Map``: its new versions are a few small nodes, where a
    new ``pmap`` is one large object the cyclic GC walks whole while it is young.
    """

    def __contains__(self, key: object, /) -> bool:
        """Whether a commit was built for this head."""
        ...

    def __getitem__(self, key: str, /) -> ContextCommit:
        """The commit built for this head."""
        ...

    def set(self, key: str, value: ContextCommit, /) -> Self:
        """The map with this head's commit set."""
        ...


AnyCommitMap = TypeVar("AnyCommitMap", bound=CommitIndex)


def node_text(value: Frozen) -> str:
    """A payload as the text the model reads: strings as they are, other JSON canonical.

    >>> node_text("hi"), node_text(None), node_text({"b": 1, "a": [2]})
    ('hi', '', '{"a":[2],"b":1}')
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return canonical_json(thaw(value))


#: Reads a generation's new items (as the commit holds them) and gives the ids cited so far.
Cite = Callable[[Sequence[ContextItem]], Collection[str]]


def item_for(call: Call, turn: int) -> ContextItem:
    """A fresh ``full`` item for a node (tokens not yet counted)."""
    if call.role is Role.TOOL:
        call_id = call.metadata.get("tool_call_id")
        return ContextItem(
            call.id,
            call.role,
            rendered=node_text(call.output),
            tool_name=call.name or None,
            tool_call_id=call_id if isinstance(call_id, str) else call.id,
            arguments=node_text(call.input) if call.input is not None else "{}",
            turn=turn,
            created_at=call.created_at,
            changed_at=call.created_at,
            is_error=call.status is Status.ERROR,
        )
    thinking = call.metadata.get(item_rendering.THINKING_KEY)
    return ContextItem(
        call.id,
        call.role,
        rendered=node_text(call.output),
        turn=turn,
        created_at=call.created_at,
        changed_at=call.created_at,
        thinking=item_rendering.thinking_json(thaw(thinking)) if thinking is not None else "",
    )


def new_branch_nodes(
    graph: Graph, parent_head: str | None, head: str
) -> Result[tuple[Call, ...], CommitError]:
    """Nodes on ``head``'s branch after ``parent_head``, oldest first; O(new nodes)."""
    if head not in graph:
        return Failure(UnknownHead(head))
    new: list[Call] = []
    for call in ancestors(graph, head):
        if call.id == parent_head:
            return Success(tuple(reversed(new)))
        new.append(call)
    if parent_head is not None:
        return Failure(NotAnAncestor(parent_head, head))
    return Success(tuple(reversed(new)))


def _tools(graph: Graph, call: Call) -> Iterator[Call]:
    # Tool calls hang off their assistant by caller and belong to its turn.
    for callee in graph.callees_of(call.id):
        tool = graph.nodes[callee]
        if tool.role is Role.TOOL:
            yield tool


def _tool_items(graph: Graph, call: Call, turn: int) -> Iterator[ContextItem]:
    return (item_for(tool, turn) for tool in _tools(graph, call))


def branch_nodes(graph: Graph, calls: Iterable[Call]) -> Iterator[Call]:
    """Each call followed, for an assistant, by its tool results: the nodes of `branch_items`.

    For a reader that needs an item only for some of them (each `item_for` renders its
    payloads).
    """
    for call in calls:
        yield call
        if call.role is Role.ASSISTANT:
            yield from _tools(graph, call)


def branch_items(graph: Graph, calls: Iterable[Call]) -> Iterator[ContextItem]:
    """Each call's item followed, for an assistant, by its tool results' items (turn 0).

    The tool results hang by ``caller``, so a walk of the branch alone never meets them;
    readers that must see what the commit will hold (the reference tracker) use this.
    """
    return (item_for(node, 0) for node in branch_nodes(graph, calls))


def _grow(  # noqa: PLR0917 - private; called once, positionally, below
    base: ContextCommit,
    graph: Graph,
    calls: tuple[Call, ...],
    sources: Mapping[str, ContextCommit],
    facts: Facts,
    pipeline: Pipeline,
) -> tuple[ContextCommit, tuple[str, ...]]:
    """``base`` with the new nodes' items appended; also the peers of a merge among them.

    Each new item goes through the pipeline's cap before it is counted, so counting a huge
    tool result costs what the request will hold; the DAG keeps the whole original.
    """
    commit, turn = base, base.next_turn()
    peers: tuple[str, ...] = ()
    for call in calls:
        if is_attach_pointer(call):
            block, expanded = expand_pointer(
                call,
                commit,
                sources,
                turn=turn,
                tokenizer=facts.tokenizer,
                rules_version=pipeline.version,
            )
            commit = attrs.evolve(
                commit.append_items(block), attached=commit.attached.update(expanded)
            )
            continue
        if is_merge_instruction(call):
            listed = call.metadata.get("peers")
            peers = tuple(str(p) for p in listed) if isinstance(listed, PVector) else ()
        fresh = [item_for(call, turn)]
        if call.role is Role.ASSISTANT:
            fresh.extend(_tool_items(graph, call, turn))
            turn += 1
        at = len(commit.items)
        commit = commit.append_items(
            item_rendering.counted(pipeline.on_arrival(item, facts, at + n), facts.tokenizer)
            for n, item in enumerate(fresh)
        )
    return commit, peers


def generate_commit(
    parent: ContextCommit | None,
    graph: Graph,
    head: str,
    pipeline: Pipeline,
    facts: Facts,
    *,
    session_id: str = "",
    sources: Mapping[str, ContextCommit] | None = None,
    cite: Cite | None = None,
) -> Result[ContextCommit, CommitError]:
    """Copy the parent's items, add the new branch nodes as full items, run the pipeline.

    Only the new items are counted; the total is kept as items change. Attach pointers
    expand the commits ``sources`` holds (by id). The result's ``parent_ids`` names the
    parent, and after a merge instruction also the merged peers' commits. ``cite`` reads
    the new items as the commit holds them (capped, counted) and gives the ids cited so
    far, which the rules see as ``facts.cited``.
    """
    # ``replaced`` starts empty, so the engine reads this turn's changes without a scan.
    base = (parent or ContextCommit(session_id)).begin_generation()

    def build(calls: tuple[Call, ...]) -> ContextCommit:
        grown, peers = _grow(base, graph, calls, sources or {}, facts, pipeline)
        ruling = attrs.evolve(facts, head_turn=grown.next_turn())
        if cite is not None:
            new = [grown.items[at] for at in range(len(base.items), len(grown.items))]
            ruling = attrs.evolve(ruling, cited=cite(new))
        ruled = pipeline.step(parent, grown, ruling)
        return attrs.evolve(
            ruled,
            session_id=parent.session_id if parent else session_id,
            parent_ids=((parent.id,) if parent else ()) + peers,
            created_at=facts.now,
            head_node_id=head,
            rules_version=pipeline.version,
        )

    return new_branch_nodes(graph, base.head_node_id, head).map(build)


def ensure_latest_commit(
    commits: AnyCommitMap,
    graph: Graph,
    head: str,
    pipeline: Pipeline,
    facts: Facts,
    *,
    session_id: str = "",
    sources: Mapping[str, ContextCommit] | None = None,
    cite: Cite | None = None,
) -> Result[tuple[ContextCommit, AnyCommitMap], CommitError]:
    """The commit for ``head``: reused if one exists, else generated from the nearest one.

    Walks back from the head only until it meets a node that has a commit, so a checkout
    to an older node reuses its commit and a new turn costs what is new. ``cite`` is
    `generate_commit`'s, called only when a commit is generated.
    """
    if head not in graph:
        return Failure(UnknownHead(head))
    parent = next((commits[c.id] for c in ancestors(graph, head) if c.id in commits), None)
    if parent is not None and parent.head_node_id == head:
        return Success((parent, commits))
    return generate_commit(
        parent, graph, head, pipeline, facts, session_id=session_id, sources=sources, cite=cite
    ).map(lambda commit: (commit, commits.set(head, commit)))
