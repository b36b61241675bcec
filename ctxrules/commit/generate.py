"""Build commits from the DAG: new branch nodes become full items, then the pipeline runs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import attrs
from pyrsistent import PMap
from returns.result import Failure, Result, Success

# Imported as a module: render imports commit, so a name import here would be circular.
import ctxrules.render.item as item_rendering
from ctxrules.canonical import canonical_json
from ctxrules.commit.commit import ContextCommit
from ctxrules.commit.errors import CommitError, NotAnAncestor, UnknownHead
from ctxrules.commit.item import ContextItem
from ctxrules.dag import Call, Frozen, Graph, Role, ancestors, thaw

if TYPE_CHECKING:
    # Rules import commits; generation only needs their types, so no import cycle at run time.
    from ctxrules.rules import Facts, Pipeline

#: Commits of one session by the head node they were built for.
CommitMap = PMap[str, ContextCommit]


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
        )
    return ContextItem(
        call.id,
        call.role,
        rendered=node_text(call.output),
        turn=turn,
        created_at=call.created_at,
        changed_at=call.created_at,
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


def _items(graph: Graph, calls: tuple[Call, ...], turn: int) -> Iterator[ContextItem]:
    for call in calls:
        yield item_for(call, turn)
        if call.role is Role.ASSISTANT:
            # Tool calls hang off their assistant by caller and belong to its turn.
            for callee in graph.callees_of(call.id):
                tool = graph.nodes[callee]
                if tool.role is Role.TOOL:
                    yield item_for(tool, turn)
            turn += 1


def generate_commit(
    parent: ContextCommit | None,
    graph: Graph,
    head: str,
    pipeline: Pipeline,
    facts: Facts,
    *,
    session_id: str = "",
) -> Result[ContextCommit, CommitError]:
    """Copy the parent's items, add the new branch nodes as full items, run the pipeline.

    Only the new items are counted; the total is kept as items change. The result's
    ``parent_ids`` names the parent, ``created_at`` is ``facts.now``.
    """
    base = parent or ContextCommit(session_id)
    turn = base.next_turn()

    def build(calls: tuple[Call, ...]) -> ContextCommit:
        fresh = [
            item_rendering.counted(item, facts.tokenizer) for item in _items(graph, calls, turn)
        ]
        grown = base.append_items(fresh)
        head_turn = grown.next_turn()
        ruled = pipeline.run(grown, attrs.evolve(facts, head_turn=head_turn))
        return attrs.evolve(
            ruled,
            session_id=parent.session_id if parent else session_id,
            parent_ids=(parent.id,) if parent else (),
            created_at=facts.now,
            head_node_id=head,
            rules_version=pipeline.version,
        )

    return new_branch_nodes(graph, base.head_node_id, head).map(build)


def ensure_latest_commit(
    commits: CommitMap,
    graph: Graph,
    head: str,
    pipeline: Pipeline,
    facts: Facts,
    *,
    session_id: str = "",
) -> Result[tuple[ContextCommit, CommitMap], CommitError]:
    """The commit for ``head``: reused if one exists, else generated from the nearest one.

    Walks back from the head only until it meets a node that has a commit, so a checkout
    to an older node reuses its commit and a new turn costs what is new.
    """
    if head not in graph:
        return Failure(UnknownHead(head))
    parent = next((commits[c.id] for c in ancestors(graph, head) if c.id in commits), None)
    if parent is not None and parent.head_node_id == head:
        return Success((parent, commits))
    return generate_commit(parent, graph, head, pipeline, facts, session_id=session_id).map(
        lambda commit: (commit, commits.set(head, commit))
    )
