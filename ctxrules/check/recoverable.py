"""Invariant 16, recoverability: every item tighter than full names a handle that gives back its original."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.attach import stands_for_pointer
from ctxrules.dag import Graph
from ctxrules.recall.lookup import (
    Original,
    RecallIndex,
    attached_texts,
    node_original,
    recall_index,
)
from ctxrules.rules.handles import fold_handle, handle_source, handles_in, item_handle


def _truth(item: ContextItem, graph: Graph, attached: Mapping[str, str]) -> str | None:
    """The original an item's handle must give back: the DAG's, what its attachment showed, or a summary's own.

    None for an attach's marker or failure notice: made from the pointer, they hold no history.
    """
    node = node_original(graph, item.source_node_id)
    if node is not None:
        return node.text
    if item.attached_from is None:
        return item.rendered
    if stands_for_pointer(item):
        return None
    return attached.get(handle_source(item))


def _hides_nothing(item: ContextItem, original: Original) -> bool:
    """Whether the item still shows its original whole (tighten kept the text: no handle needed)."""
    return item.rendered == original.text and (
        not item.is_tool or not original.arguments or item.arguments == original.arguments
    )


@attrs.define
class _Covers:
    """The summaries of one commit and the items folded into each, read once, when first asked.

    Looked up per folded item, each lookup read the whole commit twice and the summary's
    text once: a commit's check grew with the square of its length (10,000 messages: 8 s
    a commit).
    """

    commit: ContextCommit
    #: Per source id: its first item and the source ids folded into it (None: not read yet).
    folds: dict[str, tuple[ContextItem, list[str]]] | None = None
    #: Per summary asked about: the handles its text names, and its fold's handle.
    names: dict[str, tuple[frozenset[str], str]] = attrs.Factory(dict)

    def named(self, item: ContextItem, handle: str) -> bool:
        """Whether the summary that folded ``item`` names its handle or the fold's handle."""
        if self.folds is None:
            self.folds = _folds(self.commit)
        cover = self.folds.get(item.merged_into) if item.merged_into else None
        if cover is None:
            return False
        found = self.names.get(cover[0].source_node_id)
        if found is None:
            # The fold's handle is made of the source ids, its listing names each item's
            # own handle.
            found = (frozenset(handles_in(cover[0].rendered)), fold_handle(cover[1]))
            self.names[cover[0].source_node_id] = found
        shown, fold = found
        return handle in shown or fold in shown


def _folds(commit: ContextCommit) -> dict[str, tuple[ContextItem, list[str]]]:
    """Per source id of the commit: its first item and the source ids folded into it, in order."""
    found: dict[str, tuple[ContextItem, list[str]]] = {}
    members: dict[str, list[str]] = {}
    for item in commit.items:
        if item.source_node_id not in found:
            found[item.source_node_id] = (item, members.setdefault(item.source_node_id, []))
        if item.merged_into:
            members.setdefault(item.merged_into, []).append(item.source_node_id)
    return found


def _item_violations(
    item: ContextItem,
    covers: _Covers,
    graph: Graph,
    index: RecallIndex,
    attached: Mapping[str, str],
) -> list[Violation]:
    handle = item_handle(item)
    ids = (item.source_node_id, handle)
    original = index.get(handle)
    if original is None:
        return [Violation(16, ids, "a handle that resolves to the original", "no original")]
    found: list[Violation] = []
    truth = _truth(item, graph, attached)
    if truth is not None and original.text != truth:
        where = "the blob store" if original.offloaded else "the index"
        found.append(Violation(16, ids, "the original byte for byte", f"other text in {where}"))
    if item.visible:
        shown = handles_in(item.rendered) + handles_in(item.arguments)
        if handle not in shown and not _hides_nothing(item, original):
            found.append(
                Violation(16, ids, "the handle named in the item's text", item.rendered[:80])
            )
    elif not covers.named(item, handle):
        found.append(
            Violation(16, ids, "the handle named by the summary that folded it", "not named")
        )
    return found


def recoverable(
    commit: ContextCommit,
    graph: Graph,
    offloaded: Mapping[str, str] | None = None,
    *,
    nodes: RecallIndex | None = None,
    sources: Mapping[str, ContextCommit] | None = None,
) -> list[Violation]:
    """Invariant 16 on one commit: handles resolve, to exactly the original, and are shown.

    Every item tighter than full must name its handle (an aged or cleared item in its own
    text, a summarized one through the summary that folded it), the handle must resolve
    without ambiguity, and to the DAG's original byte for byte (``offloaded`` texts, from a
    blob store, included). Every handle a tightened item or summary shows must resolve too.
    ``nodes`` (a `ctxrules.recall.lookup.node_index` of ``graph``) saves rebuilding it per commit
    and must already hold the offloaded texts (``offloaded`` is then not read);
    ``sources`` are the attached commits, which hold the originals of attached copies.

    >>> from ctxrules.dag import Call
    >>> from ctxrules.rules.handles import handle_for
    >>> g = Graph().append(Call("t", "tool", name="cat", output="long text")).unwrap()
    >>> hidden = ContextCommit("s").with_items([ContextItem("t", "tool", state="cleared", rendered="[cleared]")])
    >>> [v.expected for v in recoverable(hidden, g)]
    ["the handle named in the item's text"]
    >>> shown = ContextCommit("s").with_items([ContextItem("t", "tool", state="cleared", rendered=f"[cleared] [recall {handle_for('t')}]")])
    >>> recoverable(shown, g)
    []
    """
    index = recall_index(graph, commit, offloaded, nodes=nodes, sources=sources)
    attached = attached_texts(sources or {}) if commit.attached else {}
    return _collisions(index) + _items_violations(
        commit.items, _Covers(commit), graph, index, attached
    )


def _collisions(index: RecallIndex) -> list[Violation]:
    return [
        Violation(16, (handle, *owners), "one source per handle", f"{len(owners)} sources")
        for handle, owners in index.collisions.items()
    ]


def _items_violations(
    items: Iterable[ContextItem],
    covers: _Covers,
    graph: Graph,
    index: RecallIndex,
    attached: Mapping[str, str],
) -> list[Violation]:
    found: list[Violation] = []
    for item in items:
        if item.state.tightness > State.FULL.tightness:
            found.extend(_item_violations(item, covers, graph, index, attached))
        if item.state is not State.FULL:
            found.extend(
                Violation(
                    16, (item.source_node_id, shown), "every shown handle resolves", "unknown"
                )
                for shown in handles_in(item.rendered)
                if index.get(shown) is None
            )
    return found


@attrs.define
class RecoverableChecks:
    """`recoverable` on a session's commits in turn, a commit that only adds items checking those.

    Between batch points a commit is the one before it with new items at the end: its
    handles, summaries and folds are those of the one before, so every item they share
    has the same answer. Checked whole, each stored commit rebuilt the session's recall
    index and checked every item again (at 10,000 messages, a third of `ctxrules
    verify`'s profile).
    ``read`` counts the items checked, for tests that bound the work.
    """

    graph: Graph
    nodes: RecallIndex
    sources: Mapping[str, ContextCommit] = attrs.Factory(dict)
    last: ContextCommit | None = None
    index: RecallIndex = attrs.Factory(RecallIndex)
    #: The answers for the items of ``last``, in order, and for its index's collisions.
    answers: list[Violation] = attrs.Factory(list)
    collisions: list[Violation] = attrs.Factory(list)
    attached: Mapping[str, str] | None = None
    read: int = 0

    def check(self, commit: ContextCommit) -> list[Violation]:
        """What `recoverable` finds in ``commit`` (with these ``nodes`` and ``sources``)."""
        added: Sequence[ContextItem] | None = self._added(commit)
        if added is None:
            self.index = recall_index(self.graph, commit, nodes=self.nodes, sources=self.sources)
            self.collisions = _collisions(self.index)
            self.answers, added = [], commit.items
        attached: Mapping[str, str] = {}
        if commit.attached:
            if self.attached is None:
                self.attached = attached_texts(self.sources)
            attached = self.attached
        self.read += len(added)
        self.answers = self.answers + _items_violations(
            added, _Covers(commit), self.graph, self.index, attached
        )
        self.last = commit
        return self.collisions + self.answers

    def _added(self, commit: ContextCommit) -> Sequence[ContextItem] | None:
        """The items ``commit`` adds to the last one checked, when that is all it changes.

        An added item that is a node of the graph, shown, folded into nothing and not
        attached adds no handle, summary or fold (the index leaves out summaries that are
        nodes), so the last commit's index stands; None when it does not.
        """
        last = self.last
        if last is None or commit.attached != last.attached:
            return None
        size = len(last.items)
        first = last.items.first_difference(commit.items)
        if first is not None and first < size:
            return None
        added = commit.items[size:]
        plain = all(
            item.source_node_id in self.graph
            and item.visible
            and item.merged_into is None
            and item.attached_from is None
            and item.state is not State.SUMMARY
            for item in added
        )
        return added if plain else None
