"""Exact behaviour of ``check/compaction.py`` a mutation run found untested.

What each compaction predicate reports, field by field: summaries kept out of the DAG
(invariant 5), the branch covered by items and summaries (invariant 13), the old items kept
in order, locked and never loosened across an insertion (13, 4, 3), the honest outcome of a
compaction (14), and what ``compaction_step`` puts together.
"""

from __future__ import annotations

import attrs
from pyrsistent import pset

from ctxrules.check import Violation, one_ruler
from ctxrules.check.compaction import (
    compaction_step,
    covered,
    honest_outcome,
    is_summary,
    kept_in_order,
    nothing_lost,
    summaries_outside_dag,
)
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.compaction import CompactResult, Outcome
from ctxrules.compaction.outcome import CompactionEvent
from ctxrules.dag import Call, Graph
from ctxrules.render import counted
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _graph(*calls: Call) -> Graph:
    graph = Graph()
    for call in calls:
        graph = graph.append(call).unwrap()
    return graph


def _commit(
    *items: ContextItem, head: str | None = None, attached: tuple[str, ...] = ()
) -> ContextCommit:
    commit = ContextCommit("s", head_node_id=head, attached=pset(attached))
    return commit.with_items([counted(i, RULER) for i in items])


def _item(node: str, role: str = "user", **fields: object) -> ContextItem:
    return ContextItem(node, role, rendered="text of " + node, **fields)  # type: ignore[arg-type]


def _summary(node: str = "sm_1", **fields: object) -> ContextItem:
    return _item(node, "assistant", state=State.SUMMARY, **fields)


# u0 -> a0 (which called the tool t1 and the sub-agent x1) -> the attach pointer p0 -> u1.
GRAPH = _graph(
    Call("u0", "user", output="hi"),
    Call("a0", "assistant", output="look", predecessor="u0"),
    Call("t1", "tool", name="grep", caller="a0"),
    Call("x1", "assistant", caller="a0"),
    Call("p0", "system", name="attach", predecessor="a0", metadata={"commit": "c_src"}),
    Call("u1", "user", output="more", predecessor="p0"),
)
COPY = _item("q0", attached_from="c_src")  # an attached copy: its node is in another session


def _branch(*items: ContextItem, attached: tuple[str, ...] = ("c_src",)) -> ContextCommit:
    return _commit(*items, head="u1", attached=attached)


def test_a_summary_is_named_by_its_prefix_or_its_state() -> None:
    """A replaced summary (``sm_``, summarized) and an active one under any id are summaries."""
    assert is_summary(_item("sm_0", state=State.SUMMARIZED, merged_into="sm_1"))
    assert is_summary(_summary("s9"))
    assert is_summary(_summary())
    assert not is_summary(_item("u0"))
    assert not is_summary(_item("u0", state=State.SUMMARIZED, merged_into="sm_1"))


def test_summaries_outside_the_dag_are_reported_exactly() -> None:
    """Invariant 5: a summary item whose id is a node, then each node with a summary id."""
    graph = _graph(Call("u0", "user"), Call("sm_9", "assistant", predecessor="u0"))
    clean = _commit(_item("u0"), _summary(), _item("sm_0", state=State.SUMMARIZED))
    assert summaries_outside_dag(clean, GRAPH) == []
    assert summaries_outside_dag(_commit(_item("u0"), _item("a0")), graph) == [
        Violation(5, ("sm_9",), "no DAG node with a summary id", "a node named sm_…")
    ]
    assert summaries_outside_dag(_commit(_item("u0"), _summary("u0")), graph) == [
        Violation(5, ("u0",), "a summary only in commits", "a DAG node with its id"),
        Violation(5, ("sm_9",), "no DAG node with a summary id", "a node named sm_…"),
    ]


def test_covered_follows_merged_into_to_the_active_summary() -> None:
    """Invariant 13: covered through a chain of replaced summaries; not by a gap, a loop or nothing."""
    folded = _item("u0", state=State.SUMMARIZED, merged_into="sm_0")
    replaced = _item("sm_0", state=State.SUMMARIZED, merged_into="sm_1")
    assert covered(folded, {"sm_0": replaced, "sm_1": _summary()})
    assert covered(folded, {"sm_0": _summary("sm_0")})
    assert not covered(folded, {"sm_0": replaced})
    assert not covered(folded, {"sm_1": _summary()})
    looping = _item("sm_0", state=State.SUMMARIZED, merged_into="sm_0")
    assert not covered(folded, {"sm_0": looping, "sm_1": _summary()})
    assert not covered(_item("u0", state=State.SUMMARIZED), {"sm_1": _summary()})


def test_a_whole_branch_loses_nothing() -> None:
    """Invariant 13: items for the branch and its tool callee (a sub-agent needs none), the pointer's source expanded."""
    commit = _branch(_item("u0"), _item("a0", "assistant"), _item("t1", "tool"), COPY, _item("u1"))
    assert nothing_lost(commit, GRAPH) == []


def test_a_folded_branch_loses_nothing() -> None:
    """Invariant 13: items folded into a replaced summary, which the active one replaced, are kept."""
    commit = _branch(
        _item("u0", state=State.SUMMARIZED, merged_into="sm_0"),
        _item("sm_0", "assistant", state=State.SUMMARIZED, merged_into="sm_1"),
        _summary(),
        _item("a0", "assistant", state=State.SUMMARIZED, merged_into="sm_1"),
        _item("t1", "tool"),
        _item("u1"),
    )
    assert nothing_lost(commit, GRAPH) == []


def test_what_a_branch_lost_is_reported_exactly_and_in_order() -> None:
    """Invariant 13, in branch order: the uncovered item, the missing tool item, the unexpanded pointer; then the unknown node."""
    commit = _branch(
        _item("u0", state=State.SUMMARIZED, merged_into="sm_0"),
        _item("a0", "assistant"),
        _item("u1"),
        _item("ghost"),
        attached=(),
    )
    assert nothing_lost(commit, GRAPH) == [
        Violation(
            13,
            ("u0",),
            "a summarized item whose merged_into chain reaches the active summary",
            "merged_into='sm_0'",
        ),
        Violation(13, ("t1",), "an item for the branch node", "none"),
        Violation(13, ("p0",), "the pointer's source expanded", "none"),
        Violation(13, ("ghost",), "the item's node recoverable from the DAG by id", "no such node"),
    ]


def test_an_attached_copy_is_not_an_item_of_its_node() -> None:
    """Invariant 13: a copy with a branch node's id (attached) does not stand for that node."""
    commit = _branch(
        _item("u0"),
        _item("a0", "assistant"),
        _item("t1", "tool", attached_from="c_src"),
        _item("u1"),
    )
    assert nothing_lost(commit, GRAPH) == [
        Violation(13, ("t1",), "an item for the branch node", "none")
    ]


BEFORE = _commit(
    _item("u0", tokens=4),
    _item("a0", "assistant", tokens=5),
    _item("t1", "tool", tokens=6, locked=True),
)


def _after(*items: ContextItem) -> ContextCommit:
    return ContextCommit("s").with_items(items)


def test_an_insertion_keeps_the_old_items() -> None:
    """Invariants 13, 4, 3: the old items around the new summary, one folded, the locked one as it was."""
    folded = _item("u0", state=State.SUMMARIZED, merged_into="sm_1", tokens=0)
    after = _after(folded, _summary(tokens=3), BEFORE.items[1], BEFORE.items[2])
    assert kept_in_order(BEFORE, after, "sm_1") == []
    assert kept_in_order(BEFORE, BEFORE, None) == []


def test_a_dropped_or_moved_item_is_counted() -> None:
    """Invariant 13: the old items counted against those left beside the summary."""
    dropped = _after(BEFORE.items[0], _summary(), BEFORE.items[2])
    assert kept_in_order(BEFORE, dropped, "sm_1") == [
        Violation(13, (), "the 3 old items in order, plus the summary", "2 items")
    ]
    moved = _after(BEFORE.items[1], BEFORE.items[0], BEFORE.items[2])
    assert kept_in_order(BEFORE, moved, None) == [
        Violation(13, (), "the 3 old items in order, plus the summary", "3 items")
    ]
    attached = _after(
        BEFORE.items[0], _item("a0", "assistant", attached_from="c_x"), BEFORE.items[2]
    )
    assert len(kept_in_order(BEFORE, attached, None)) == 1


def test_a_changed_locked_item_is_invariant_4() -> None:
    """Invariant 4: a locked item changed in any way is reported once, with its new state."""
    aged = _item("t1", "tool", tokens=6, locked=True, state=State.AGED)
    after = _after(BEFORE.items[0], BEFORE.items[1], aged)
    assert kept_in_order(BEFORE, after, "sm_1") == [
        Violation(4, ("t1",), "the locked item unchanged", "aged")
    ]


def test_a_loosened_or_grown_item_is_invariant_3() -> None:
    """Invariant 3: a looser state at equal tokens, or more tokens in the same state, is reported."""
    before = _after(_item("u0", tokens=4, state=State.AGED), _item("a0", "assistant", tokens=5))
    loosened = _after(_item("u0", tokens=4), before.items[1])
    assert kept_in_order(before, loosened, None) == [
        Violation(3, ("u0",), "at least as tight as aged, at most 4 tokens", "full, 4 tokens")
    ]
    grown = _after(before.items[0], _item("a0", "assistant", tokens=6))
    assert kept_in_order(before, grown, None) == [
        Violation(3, ("a0",), "at least as tight as full, at most 5 tokens", "full, 6 tokens")
    ]


CURRENT = _commit(_item("u0"), _item("a0", "assistant"), head="a0")
FIXED = 3
STARTED = CompactionEvent(Outcome.STARTED, "c_base")


def _finished(**fields: object) -> CompactResult:
    values: dict[str, object] = {
        "events": (STARTED, CompactionEvent(Outcome.FINISHED, "c_base")),
        "tokens_before": CURRENT.total_tokens + FIXED + 10,
        "tokens_after": CURRENT.total_tokens + FIXED,
        "summarised_count": 1,
        "summary_id": "sm_1",
        "fixed_tokens": FIXED,
    }
    values.update(fields)
    return CompactResult(Outcome.FINISHED, CURRENT, "c_base", **values)  # type: ignore[arg-type]


def _no_op(base: str = CURRENT.id, **fields: object) -> CompactResult:
    events = (CompactionEvent(Outcome.NO_OP, base),)
    tokens = CURRENT.total_tokens
    return CompactResult(Outcome.NO_OP, CURRENT, base, events, tokens, tokens, **fields)  # type: ignore[arg-type]


def _failed(**fields: object) -> CompactResult:
    events = (STARTED, CompactionEvent(Outcome.FAILED, "c_base"))
    tokens = CURRENT.total_tokens
    return CompactResult(Outcome.FAILED, CURRENT, "c_base", events, tokens, tokens, **fields)  # type: ignore[arg-type]


def test_honest_outcomes_break_nothing() -> None:
    """Invariant 14: a finished fold of one item, a no-op without a call, a failure without a summary."""
    assert honest_outcome(_finished(), 1) == []
    assert honest_outcome(_no_op(), 0) == []
    assert honest_outcome(_failed(), 1) == []
    assert honest_outcome(_failed(), 0) == []


def test_a_dishonest_finish_is_reported_exactly_and_in_order() -> None:
    """Invariant 14: nothing folded, no tokens saved, tokens off the ruler, the wrong events."""
    ids = ("c_base",)
    before = CURRENT.total_tokens + FIXED - 1
    result = _finished(
        summarised_count=0,
        tokens_before=before,
        tokens_after=before,
        events=(CompactionEvent(Outcome.FINISHED, "c_base"),),
    )
    assert honest_outcome(result, 1) == [
        Violation(14, ids, "summarised_count > 0", "0"),
        Violation(14, ids, f"tokens_after < tokens_before={before}", str(before)),
        Violation(14, ids, "tokens_after by the one ruler", str(before)),
        Violation(14, ids, "events ['started', 'finished']", "['finished']"),
    ]


def test_a_finish_must_save_a_token() -> None:
    """Invariant 14: as many tokens after as before is no saving."""
    same = CURRENT.total_tokens + FIXED
    assert honest_outcome(_finished(tokens_before=same), 1) == [
        Violation(14, ("c_base",), f"tokens_after < tokens_before={same}", str(same))
    ]


def test_a_dishonest_no_op_is_reported_exactly() -> None:
    """Invariant 14: a no-op that called the summarizer, or changed the commit, or sent the wrong events."""
    assert honest_outcome(_no_op(), 2) == [
        Violation(14, (CURRENT.id,), "no summarizer call", "2 calls")
    ]
    assert honest_outcome(_no_op("c_other"), 0) == [
        Violation(14, ("c_other",), "the commit unchanged", CURRENT.id)
    ]
    silent = attrs.evolve(_no_op(), events=())
    assert honest_outcome(silent, 0) == [Violation(14, (CURRENT.id,), "events ['no_op']", "[]")]


def test_a_failure_with_a_summary_is_reported() -> None:
    """Invariant 14: a failed compaction names no summary."""
    assert honest_outcome(_failed(summary_id="sm_1"), 1) == [
        Violation(14, ("c_base",), "no summary after a failure", "sm_1")
    ]


def _step_graph() -> Graph:
    return _graph(Call("u0", "user", output="hi"), Call("a0", "assistant", predecessor="u0"))


def test_compaction_step_counts_the_summarizer_calls() -> None:
    """Invariant 14 through compaction_step: a no-op that called the summarizer once is reported."""
    assert one_ruler(CURRENT, RULER) == []
    assert compaction_step(CURRENT, _no_op(), _step_graph(), RULER, 0) == []
    assert compaction_step(CURRENT, _no_op(), _step_graph(), RULER, 1) == [
        Violation(14, (CURRENT.id,), "no summarizer call", "1 calls")
    ]


def test_compaction_step_checks_the_insertion_only_after_a_finish() -> None:
    """Invariants 14 and 4: a finish gets both its outcome and its insertion checked; a failure neither."""
    before = _commit(_item("u0"), _item("a0", "assistant", locked=True), head="a0")
    assert compaction_step(before, _failed(), _step_graph(), RULER, 1) == []
    assert compaction_step(before, _finished(), _step_graph(), RULER, 1) == [
        Violation(4, ("a0",), "the locked item unchanged", "full")
    ]
    assert compaction_step(before, _finished(summarised_count=0), _step_graph(), RULER, 1) == [
        Violation(14, ("c_base",), "summarised_count > 0", "0"),
        Violation(4, ("a0",), "the locked item unchanged", "full"),
    ]
