"""Resolving a handle to the original it names: a pure lookup over the DAG and the commit.

Four kinds of handle resolve: a node's (its original output, and a tool's arguments), an
attached copy's (the text its source commit showed), a summary item's (its text, which
lives only in commits) and a fold's (the list of every item a summary replaced, each with
its own handle). No LLM and no I/O: the host builds
the index from what it already holds and answers the model's tool call from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

import attrs
from pyrsistent import PMap, pmap

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.attach import stands_for_pointer
from ctxrules.compaction.plan import label
from ctxrules.dag import Graph, Role, is_attach_pointer, pointer_commit
from ctxrules.generation import node_text
from ctxrules.render.item import SUMMARY_PREFIX
from ctxrules.rules.handles import fold_handle, handle_for, handle_source, item_handle
from ctxrules.rules.text import head, one_line

#: Characters of each folded item's text shown in a fold's listing.
LISTING_HEAD_CHARS = 80


@attrs.frozen
class Original:
    """What a handle names: its kind (``node``, ``attached``, ``summary``, ``fold``), source id and text.

    ``arguments`` is a tool call's original arguments (empty otherwise); ``tool_name`` its
    name. ``offloaded`` is true when the text came from the blob store.
    """

    handle: str
    kind: str
    source_id: str
    text: str
    tool_name: str | None = None
    arguments: str = ""
    offloaded: bool = False


class Handles(Protocol):
    """What the recall tools read a handle from: a `RecallIndex`, or the per-turn `SessionHandles`."""

    def ambiguous(self, handle: str) -> bool:
        """Whether two sources share the handle (it then resolves to nothing)."""
        ...

    def get(self, handle: str) -> Original | None:
        """The original a handle names, or None when unknown or ambiguous."""
        ...


@attrs.frozen
class RecallIndex:
    """Every resolvable handle of one session, and the handles two sources share (if any)."""

    entries: PMap[str, Original] = attrs.field(factory=pmap)
    collisions: PMap[str, tuple[str, ...]] = attrs.field(factory=pmap)

    def ambiguous(self, handle: str) -> bool:
        """Whether two sources share the handle."""
        return handle in self.collisions

    def get(self, handle: str) -> Original | None:
        """The original a handle names, or None when unknown or ambiguous."""
        return None if handle in self.collisions else self.entries.get(handle)

    def __len__(self) -> int:
        return len(self.entries)


def node_original(graph: Graph, node_id: str) -> Original | None:
    """A DAG node's original as an item shows it when full, or None if the node is unknown.

    >>> from ctxrules.dag import Call
    >>> g = Graph().append(Call("t1", "tool", name="cat", input={"path": "a"}, output="hi")).unwrap()
    >>> o = node_original(g, "t1")
    >>> (o.kind, o.text, o.tool_name, o.arguments)
    ('node', 'hi', 'cat', '{"path":"a"}')
    """
    call = graph.get(node_id)
    if call is None:
        return None
    is_tool = call.role is Role.TOOL
    arguments = (node_text(call.input) if call.input is not None else "{}") if is_tool else ""
    return Original(
        handle_for(node_id),
        "node",
        node_id,
        node_text(call.output),
        tool_name=(call.name or None) if is_tool else None,
        arguments=arguments,
    )


def listing(folded: list[ContextItem]) -> str:
    """A fold's text: one line per folded item, its handle, label and the head of its text."""
    return "\n".join(
        f"{item_handle(item)} [{label(item)}] "
        f"{head(one_line(item.rendered), LISTING_HEAD_CHARS)}".rstrip()
        for item in folded
    )


def attached_texts(sources: Mapping[str, ContextCommit]) -> dict[str, str]:
    """The text each attached copy had when it was attached, by `handle_source`.

    A source commit's own items come first: a commit that nests another may since have
    tightened its copies.
    """
    own: dict[str, str] = {}
    nested: dict[str, str] = {}
    for source_id, source in sources.items():
        for item in source.items:
            if item.state is State.SUMMARIZED:
                continue
            text = SUMMARY_PREFIX + item.rendered if item.state is State.SUMMARY else item.rendered
            found = own if item.attached_from is None else nested
            key = f"{item.attached_from or source_id}\n{item.source_node_id}"
            found.setdefault(key, text)
    return {**nested, **own}


def _pointer_texts(graph: Graph, commit: ContextCommit) -> dict[str, str]:
    """The text of each attach pointer of the graph that the commit expanded, by commit id."""
    if not commit.attached:
        return {}
    return {
        pointer_commit(call): node_text(call.output)
        for call in graph.nodes.values()
        if is_attach_pointer(call) and pointer_commit(call) in commit.attached
    }


def attached_entries(
    commit: ContextCommit, graph: Graph, sources: Mapping[str, ContextCommit]
) -> list[Original]:
    """The handles of the commit's attached copies: each names what its attachment showed.

    A copy of one of this graph's nodes names the node's original; a marker or failure
    notice names its attach pointer; any other copy the text its source commit held.
    """
    copies = [item for item in commit.items if item.attached_from is not None]
    if not copies:
        return []
    pointers = _pointer_texts(graph, commit)
    texts = attached_texts(sources)
    found: list[Original] = []
    for item in copies:
        key, sid = handle_source(item), item.source_node_id
        node = node_original(graph, sid)
        if node is not None:
            found.append(attrs.evolve(node, handle=handle_for(key)))
            continue
        text = texts.get(key)
        if text is None and stands_for_pointer(item):
            text = pointers.get(item.attached_from or "", item.rendered)
        if text is not None:
            found.append(Original(handle_for(key), "attached", key, text))
    return found


@attrs.frozen
class Fold:
    """A fold's handle and the items it replaced; its listing is written when it is read.

    Listing every folded item costs a handle per item: the per-turn index keeps the fold
    like this, so that only a recall of the fold pays for it.
    """

    handle: str
    source_id: str
    members: tuple[ContextItem, ...]
    kind = "fold"

    def original(self) -> Original:
        """The fold as a recall shows it: one line per folded item."""
        return Original(self.handle, self.kind, self.source_id, listing(list(self.members)))


def commit_entries(commit: ContextCommit) -> list[Original | Fold]:
    """The handles of every summary item in the commit and of the fold each one made."""
    folded: dict[str, list[ContextItem]] = {}
    for item in commit.items:
        if item.merged_into is not None:
            folded.setdefault(item.merged_into, []).append(item)
    found: list[Original | Fold] = []
    for item in commit.items:
        sid = item.source_node_id
        if item.state is State.SUMMARY or sid in folded:
            found.append(Original(handle_for(sid), "summary", sid, item.rendered))
        members = folded.get(sid, [])
        if members:
            ids = [m.source_node_id for m in members]
            found.append(Fold(fold_handle(ids), sid, tuple(members)))
    return found


def summary_entries(commit: ContextCommit) -> list[Original]:
    """`commit_entries` with each fold's listing written out."""
    return [e.original() if isinstance(e, Fold) else e for e in commit_entries(commit)]


def node_index(graph: Graph, offloaded: Mapping[str, str] | None = None) -> RecallIndex:
    """The handles of every DAG node; build it once and extend it per commit with `recall_index`.

    ``offloaded`` maps handles to whole texts kept in a blob store; such a handle resolves
    to the stored text (which invariant 16 requires to equal the DAG's).
    """
    return _indexed(
        node
        if (stored := (offloaded or {}).get(node.handle)) is None
        else attrs.evolve(node, text=stored, offloaded=True)
        for node_id in graph.nodes
        if (node := node_original(graph, node_id)) is not None
    )


def _indexed(found: Iterable[Original], base: RecallIndex | None = None) -> RecallIndex:
    entries = dict(base.entries) if base is not None else {}
    owners: dict[str, set[str]] = {h: set(o) for h, o in (base.collisions if base else {}).items()}
    for original in found:
        owner = f"{original.kind}:{original.source_id}"
        known = entries.get(original.handle)
        if known is not None and f"{known.kind}:{known.source_id}" != owner:
            owners.setdefault(original.handle, {f"{known.kind}:{known.source_id}"}).add(owner)
        entries.setdefault(original.handle, original)
    collisions = {h: tuple(sorted(o)) for h, o in owners.items() if len(o) > 1}
    return RecallIndex(pmap(entries), pmap(collisions))


def recall_index(
    graph: Graph,
    commit: ContextCommit | None = None,
    offloaded: Mapping[str, str] | None = None,
    *,
    nodes: RecallIndex | None = None,
    sources: Mapping[str, ContextCommit] | None = None,
) -> RecallIndex:
    """Every handle of the session: its DAG nodes, the commit's attached copies, summaries and folds.

    ``nodes`` is a `node_index` of the same graph built earlier, to reuse over many commits;
    ``sources`` the attached commits (by id), where attached copies' originals live.
    """
    base = nodes if nodes is not None else node_index(graph, offloaded)
    if commit is None:
        return base
    summaries = (o for o in summary_entries(commit) if o.source_id not in graph)
    return _indexed([*attached_entries(commit, graph, sources or {}), *summaries], base)
