"""Exact behaviour of ``check/attach.py``, ``identity.py``, ``prefix.py`` and ``recorded.py`` a mutation run found untested.

Invariant 6 (markers counted per source, copies and unrecorded sources, the order of the
reports), invariant 7 (where the walk for a merge stops, which merges count), invariant 13
for attached items (skipped items, every unknown source and missing node reported), the
items a step kept not rehashed for invariant 2, and invariant 15 between batch points.
"""

from __future__ import annotations

import attrs
from pyrsistent import pset

from ctxrules.check import Violation
from ctxrules.check.attach import (
    attached_once,
    attached_traceable,
    multi_parent_from_merge,
    no_block_expanded,
)
from ctxrules.check.identity import content_id_matches
from ctxrules.check.prefix import prefix_stable
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.dag import MERGE, Call, Graph
from ctxrules.render import counted
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _commit(*items: ContextItem, **fields: object) -> ContextCommit:
    commit = ContextCommit("s").with_items([counted(i, RULER) for i in items])
    return attrs.evolve(commit, **fields) if fields else commit


def _item(node: str, source: str | None = None) -> ContextItem:
    return ContextItem(node, "user", rendered="text of " + node, attached_from=source)


MARKER = _item("attach:s2:c_src", "c_src")


def test_three_markers_of_one_source_are_one_violation() -> None:
    """Invariant 6: a third marker of a source is reported, with the count; two are one expansion."""
    twice = _commit(MARKER, _item("x1", "c_src"), MARKER, attached=pset(["c_src"]))
    assert attached_once(twice) == []
    thrice = twice.append_items([counted(MARKER, RULER)])
    assert attached_once(thrice) == [
        Violation(
            6, ("attach:s2:c_src",), "one expansion per source commit (two markers)", "3 markers"
        )
    ]


def test_a_copied_node_and_an_unrecorded_source_are_reported_exactly() -> None:
    """Invariant 6: each node copied twice from a source, then the sources missing from ``attached``."""
    copies = _commit(
        _item("x1", "c_src"), _item("x1", "c_src"), _item("y1", "c_b"), _item("z1", "c_a")
    )
    assert attached_once(copies) == [
        Violation(6, ("x1",), "one copy of each node attached from c_src", "2 copies"),
        Violation(
            6,
            ("c_a", "c_b", "c_src"),
            "every attached source recorded in commit.attached",
            "unrecorded sources",
        ),
    ]


def test_copies_are_reported_in_the_order_of_their_text() -> None:
    """Invariant 6: copies come sorted by the text of (source, node), so ``t#2`` before ``t``."""
    items = [_item(node, "c_src") for node in ("t", "t", "t#2", "t#2")]
    commit = _commit(*items, attached=pset(["c_src"]))
    assert [v.ids for v in attached_once(commit)] == [("t#2",), ("t",)]
    before = _commit(_item("u0"))
    after = before.append_items([counted(i, RULER) for i in items])
    assert no_block_expanded(before, after) == [
        Violation(6, ("t#2",), "no copy of an item attached from c_src made by a rule", "2 new"),
        Violation(6, ("t",), "no copy of an item attached from c_src made by a rule", "2 new"),
    ]


def test_every_untraceable_attached_item_is_reported() -> None:
    """Invariant 13: past plain items, markers and failure notices, each unknown source and missing node."""
    source = _commit(_item("x1"))
    commit = _commit(
        _item("u0"),
        MARKER,
        _item("attach-failed:s2:c_gone", "c_gone"),
        _item("x1", "c_src"),
        _item("y1", "c_gone"),
        _item("y2", "c_lost"),
        _item("x9", "c_src"),
        _item("x8", "c_src"),
    )
    assert attached_traceable(commit, {"c_src": source}) == [
        Violation(13, ("y1",), "source commit c_gone known", "an unknown source"),
        Violation(13, ("y2",), "source commit c_lost known", "an unknown source"),
        Violation(13, ("x9",), "node held by source commit c_src", "a node the source lacks"),
        Violation(13, ("x8",), "node held by source commit c_src", "a node the source lacks"),
    ]


def _merge_graph(peers: object = ("c_p2",)) -> Graph:
    metadata = {} if peers is None else {"peers": list(peers)}  # type: ignore[call-overload]
    calls = [
        Call("u0", "user", output="hi"),
        Call("a0", "assistant", output="hello", predecessor="u0"),
        Call("m1", "user", name=MERGE, output="merge", predecessor="a0", metadata=metadata),
        Call("a1", "assistant", output="merged", predecessor="m1"),
        Call("u2", "user", output="go on", predecessor="a1"),
        Call("a2", "assistant", output="ok", predecessor="u2"),
    ]
    graph = Graph()
    for call in calls:
        graph = graph.append(call).unwrap()
    return graph


MERGED = ContextCommit("s", parent_ids=("c_p1", "c_p2"), head_node_id="a2")
BROKEN_7 = Violation(
    7, (MERGED.id,), "several parents only after a merge naming them", "parents ['c_p1', 'c_p2']"
)


def test_a_merge_counts_only_past_the_first_parents_head() -> None:
    """Invariant 7: the walk for the merge stops at the first parent's head, not another's."""
    graph = _merge_graph()
    other = ContextCommit("s", head_node_id="u0")  # the second parent: no stop for the walk
    before_merge = {"c_p1": ContextCommit("s", head_node_id="a0"), "c_p2": other}
    assert multi_parent_from_merge(MERGED, graph, before_merge) == []
    past_merge = {"c_p1": ContextCommit("s", head_node_id="a1"), "c_p2": other}
    assert multi_parent_from_merge(MERGED, graph, past_merge) == [BROKEN_7]
    # A first parent not in the map: the walk goes to the root and finds the merge.
    assert multi_parent_from_merge(MERGED, graph, {}) == []


def test_only_a_merge_naming_the_parents_allows_them() -> None:
    """Invariant 7: a merge naming the other parents, or all of them, counts; others do not."""
    assert multi_parent_from_merge(MERGED, _merge_graph(("c_p1", "c_p2")), {}) == []
    assert multi_parent_from_merge(MERGED, _merge_graph(("c_p3",)), {}) == [BROKEN_7]
    assert multi_parent_from_merge(MERGED, _merge_graph(None), {}) == [BROKEN_7]
    one = ContextCommit("s", parent_ids=("c_p1",), head_node_id="a2")
    assert multi_parent_from_merge(one, _merge_graph(("c_p3",)), {}) == []


def test_an_item_the_step_kept_is_not_rehashed() -> None:
    """Invariant 2: a kept item edited late is the earlier step's stale id, not this one's."""
    first = _commit(_item("u0"), _item("u1"))
    step = first.append_items([counted(_item("u2"), RULER)])
    assert step.items[0] is first.items[0]
    object.__setattr__(first.items[0], "rendered", "edited late")
    assert content_id_matches(step, first) == []
    (found,) = content_id_matches(step)
    assert found.found == "a stale id (the items changed behind the commit's methods)"


def test_a_rewrite_between_batch_points_breaks_invariant_15() -> None:
    """Invariant 15: with a batching policy and no new batch point, a rewritten or dropped item."""
    parent = _commit(_item("u0"), _item("a0"))
    aged = counted(attrs.evolve(parent.items[1], state=State.AGED, rendered="[aged]"), RULER)
    rewritten = parent.replace_items({1: aged})
    assert prefix_stable(parent, rewritten) == [
        Violation(
            15, ("a0",), "items already sent left unchanged between batch points", "1 rewritten"
        )
    ]
    shorter = _commit(_item("u0"))
    assert prefix_stable(parent, shorter, batched=True) == [
        Violation(
            15, (shorter.id,), "at least the parent's 2 items between batch points", "1 items"
        )
    ]
