"""The recall index kept turn by turn: grown by what is new, never rebuilt from the history.

`recall_index` builds every handle of a session at once, which is right for a check over
a stored session but costs the whole history per answer. A host that answers recall
calls turn after turn keeps these instead: `NodeHandles` visits each DAG node once, when
it is appended; `CommitHandles` follows the commit and looks only at the 64-item chunks
it does not share with the one before, rebuilding when a summary, a folded item or an
attached copy is among them (after a compaction, once). `SessionHandles` reads both as
the recall tools do. All are values: a new version shares everything unchanged with the
old one (``immutables.Map``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs
from immutables import Map, MapMutation

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.dag import Graph
from ctxrules.dag.layered import LayeredIds
from ctxrules.recall.lookup import (
    Fold,
    Original,
    attached_entries,
    commit_entries,
    node_original,
)
from ctxrules.rules.handles import handle_for

_NO_OWNERS: Map[str, str] = Map()
_NO_CLASHES: Map[str, tuple[str, ...]] = Map()
_NO_ENTRIES: Map[str, Original | Fold] = Map()


def _owner(kind: str, source_id: str) -> str:
    return f"{kind}:{source_id}"


def _clash(known: tuple[str, ...], *owners: str) -> tuple[str, ...]:
    return tuple(sorted({*known, *owners}))


@attrs.frozen
class NodeHandles:
    """The handle of every node of a graph, by node id, grown by the nodes appended since.

    A node's handle depends on its id alone, so each node is visited once, when it is
    new; its original is read from the graph when the handle is recalled (a running tool
    node completes later without changing its handle). ``seen`` nodes of the graph's
    order are indexed, the last being ``last``; ``visited`` counts the nodes the step that
    made this version looked at (work counted, for the tests that guard it).

    >>> from ctxrules.dag import Call
    >>> g = Graph().append(Call("u1", "user", output="hi")).unwrap()
    >>> one = NodeHandles().grown(g)
    >>> g = g.append(Call("t1", "tool", output="ok", predecessor="u1")).unwrap()
    >>> two = one.grown(g)
    >>> (one.visited, two.visited, two.owners[handle_for("t1")])
    (1, 1, 't1')
    """

    owners: Map[str, str] = _NO_OWNERS
    clashes: Map[str, tuple[str, ...]] = _NO_CLASHES
    seen: int = 0
    last: str | None = None
    visited: int = 0
    #: The first ``start`` nodes of the order are not hashed here: their source answers
    #: which of them hold a handle (`answering`). 0 when every node is indexed.
    start: int = 0
    lookup: Callable[[str], Sequence[str] | None] | None = None
    #: False once a source could not tell (its rows predate stored handles): hash them all.
    use_source: bool = True

    def grown(self, graph: Graph) -> NodeHandles:
        """This index with the nodes of ``graph`` appended since; rebuilt for another graph."""
        order = graph.order
        same = self.seen <= len(order) and (
            self.seen == self.start or order[self.seen - 1] == self.last
        )
        base = self if same else NodeHandles(use_source=self.use_source)
        if base.seen == 0 and base.use_source and isinstance(order, LayeredIds):
            lookup = order.handle_owners
            if lookup is not None and order.stored:
                # A resumed graph's stored nodes stay unread: the source knows their handles.
                base = NodeHandles(seen=order.stored, start=order.stored, lookup=lookup)
        if base.seen == len(order):
            return base if base.visited == 0 else attrs.evolve(base, visited=0)
        owners, clashes = base.owners.mutate(), base.clashes.mutate()
        # From the start, one walk of the order (a resumed graph's stored ids are a list);
        # after it, a lookup for each of the few new nodes (a walk would skip all the rest).
        fresh = iter(order) if base.seen == 0 else (order[p] for p in range(base.seen, len(order)))
        for node_id in fresh:
            _index(owners, clashes, handle_for(node_id), node_id)
        return attrs.evolve(
            base,
            owners=owners.finish(),
            clashes=clashes.finish(),
            seen=len(order),
            last=order[-1],
            visited=len(order) - base.seen,
        )

    def answering(self, handle: str, graph: Graph) -> NodeHandles:
        """This index able to answer ``handle`` exactly: the stored nodes holding it looked up.

        A source that cannot tell (rows stored before handles were kept) makes every node
        hashed instead, once.
        """
        if self.start == 0 or self.lookup is None:
            return self
        stored = self.lookup(handle)
        if stored is None:
            return NodeHandles(use_source=False).grown(graph)
        owners, clashes = self.owners.mutate(), self.clashes.mutate()
        known = owners.get(handle)
        if known is not None:
            # A new node holds it too: the stored ones come first in the order.
            del owners[handle]
        for node_id in (*stored, *((known,) if known is not None else ())):
            _index(owners, clashes, handle, node_id)
        return attrs.evolve(self, owners=owners.finish(), clashes=clashes.finish())


def _index(
    owners: MapMutation[str, str],
    clashes: MapMutation[str, tuple[str, ...]],
    handle: str,
    node_id: str,
) -> None:
    """Record that ``node_id`` holds ``handle`` in the maps being built (a second holder clashes)."""
    known = owners.get(handle)
    if known is None:
        owners[handle] = node_id
    elif known != node_id:
        clashes[handle] = _clash(
            clashes.get(handle, ()), _owner("node", known), _owner("node", node_id)
        )


def _in_commit_only(item: ContextItem | None, covers: frozenset[str]) -> bool:
    """Whether the commit's own handles depend on this item (a summary, a fold, a copy)."""
    return item is not None and (
        item.state in {State.SUMMARY, State.SUMMARIZED}
        or item.merged_into is not None
        or item.attached_from is not None
        or item.source_node_id in covers
    )


def _may_hold(commit: ContextCommit) -> bool:
    """Whether a commit can have handles of its own: a summary, a folded item or an attachment."""
    return commit.summary_at != -1 or bool(commit.hidden) or bool(commit.attached)


@attrs.frozen
class CommitHandles:
    """The handles that live in one commit: its summaries, their folds, its attached copies.

    ``covers`` are the source ids that items were folded into. `moved_to` follows a later
    commit: when it changed none of the items these handles depend on, the entries carry
    over after a look at the chunks of items it does not share with this one.
    ``visited`` counts the items the step that made this version looked at.
    """

    commit: ContextCommit | None = None
    entries: Map[str, Original | Fold] = _NO_ENTRIES
    clashes: Map[str, tuple[str, ...]] = _NO_CLASHES
    covers: frozenset[str] = frozenset()
    visited: int = 0

    @classmethod
    def of(
        cls,
        commit: ContextCommit,
        graph: Graph,
        sources: Mapping[str, ContextCommit] | None = None,
    ) -> CommitHandles:
        """The commit's own handles, from all its items (none without a summary, fold or copy)."""
        if not _may_hold(commit):
            return cls(commit)
        entries, clashes = _NO_ENTRIES.mutate(), _NO_CLASHES.mutate()
        found: list[Original | Fold] = [
            *attached_entries(commit, graph, sources or {}),
            *(o for o in commit_entries(commit) if o.source_id not in graph),
        ]
        for original in found:
            known = entries.get(original.handle)
            if known is None:
                entries[original.handle] = original
            elif (known.kind, known.source_id) != (original.kind, original.source_id):
                owners = (
                    _owner(known.kind, known.source_id),
                    _owner(original.kind, original.source_id),
                )
                clashes[original.handle] = _clash(clashes.get(original.handle, ()), *owners)
        covers = frozenset(o.source_id for o in found if isinstance(o, Fold))
        return cls(commit, entries.finish(), clashes.finish(), covers, len(commit.items))

    def moved_to(
        self,
        commit: ContextCommit,
        graph: Graph,
        sources: Mapping[str, ContextCommit] | None = None,
    ) -> CommitHandles:
        """The handles of ``commit``, carried over from this one when its changes leave them be."""
        if commit is self.commit:
            return self if self.visited == 0 else attrs.evolve(self, visited=0)
        if not _may_hold(commit):
            return CommitHandles(commit)
        if self.commit is None:
            return CommitHandles.of(commit, graph, sources)
        pairs, compared = _changed(self.commit, commit)
        if any(
            _in_commit_only(a, self.covers) or _in_commit_only(b, self.covers) for a, b in pairs
        ):
            rebuilt = CommitHandles.of(commit, graph, sources)
            return attrs.evolve(rebuilt, visited=rebuilt.visited + compared)
        return attrs.evolve(self, commit=commit, visited=compared)


def _changed(
    before: ContextCommit, commit: ContextCommit
) -> tuple[list[tuple[ContextItem | None, ContextItem | None]], int]:
    """The (old, new) items at each position where the commits differ, and the items compared.

    A commit generated from another shares every chunk it did not change (however many
    commits lie between), so only the items of the chunks they do not share are compared.
    """
    old, new = before.items.chunks(), commit.items.chunks()
    pairs: list[tuple[ContextItem | None, ContextItem | None]] = []
    compared = 0
    for number in range(max(len(old), len(new))):
        was = old[number] if number < len(old) else ()
        now = new[number] if number < len(new) else ()
        if was is now:
            continue
        for offset in range(max(len(was), len(now))):
            compared += 1
            a = was[offset] if offset < len(was) else None
            b = now[offset] if offset < len(now) else None
            if a is not b:
                pairs.append((a, b))
    return pairs, compared


@attrs.frozen
class SessionHandles:
    """Every handle of a session as the recall tools read it: a node's from the graph, the rest from the commit.

    A handle two sources share is ambiguous: it resolves to nothing, as in `recall_index`.

    >>> from ctxrules.dag import Call
    >>> g = Graph().append(Call("t1", "tool", name="cat", output="all of it")).unwrap()
    >>> handles = SessionHandles(g, NodeHandles().grown(g))
    >>> handles.get(handle_for("t1")).text, handles.get("h:zzzzzzzz")
    ('all of it', None)
    """

    graph: Graph
    nodes: NodeHandles = NodeHandles()
    commit: CommitHandles = CommitHandles()

    def ambiguous(self, handle: str) -> bool:
        """Whether two sources share the handle."""
        if handle in self.nodes.clashes or handle in self.commit.clashes:
            return True
        node_id = self.nodes.owners.get(handle)
        other = self.commit.entries.get(handle)
        return (
            node_id is not None
            and other is not None
            and (other.kind, other.source_id) != ("node", node_id)
        )

    def get(self, handle: str) -> Original | None:
        """The original a handle names, or None when unknown or ambiguous."""
        if self.ambiguous(handle):
            return None
        node_id = self.nodes.owners.get(handle)
        if node_id is not None:
            return node_original(self.graph, node_id)
        found = self.commit.entries.get(handle)
        return found.original() if isinstance(found, Fold) else found
