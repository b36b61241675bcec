"""Exact behaviour of ``check/invariants.py`` a mutation run found untested.

Invariant 13 for a rule (a reorder found whatever the ids sort like, added and replaced
items named), invariant 3 (a grown item, a full item's text changed), invariant 4 (what a
touched locked item reports), invariant 10 (the miscount's texts), invariant 11 (orphan
results wherever they sit, repeated and unanswered calls) and invariant 12 (the count).
"""

from __future__ import annotations

import attrs

from ctxrules.check import Violation
from ctxrules.check.invariants import (
    items_kept,
    locked_untouched,
    monotone_tightening,
    one_ruler,
    one_summary,
    protocol_valid,
)
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import Message, TextBlock, ToolResultBlock, ToolUseBlock, counted
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _commit(*items: ContextItem) -> ContextCommit:
    return ContextCommit("s").with_items(list(items))


def _item(node: str, source: str | None = None, **fields: object) -> ContextItem:
    return ContextItem(node, "user", rendered="text of " + node, attached_from=source, **fields)  # type: ignore[arg-type]


def test_a_reorder_is_found_by_the_same_sort_on_both_sides() -> None:
    """Invariant 13: ``t#2`` sorts before ``t`` as text; swapping them is a reorder, not a loss."""
    before = _commit(_item("t"), _item("t#2"))
    after = _commit(_item("t#2"), _item("t"))
    assert items_kept(before, after) == [
        Violation(
            13,
            ("t", "t#2"),
            "the input order (t at position 0)",
            "t#2 moved there (items reordered)",
        )
    ]


def test_a_reorder_of_a_node_and_its_attached_copy_is_reported() -> None:
    """Invariant 13: a node and a copy of it from another commit (no source vs a source) swap."""
    before = _commit(_item("x1"), _item("x1", "c_src"))
    after = _commit(_item("x1", "c_src"), _item("x1"))
    assert items_kept(before, after) == [
        Violation(
            13,
            ("x1", "x1"),
            "the input order (x1 at position 0)",
            "x1 moved there (items reordered)",
        )
    ]


def test_an_added_item_is_unexpected_and_a_dropped_one_missing() -> None:
    """Invariant 13: the new item alone, the dropped one alone, and a replaced one as both."""
    before = _commit(_item("u0"), _item("u1"))
    added = _commit(_item("u0"), _item("u1"), _item("x9"))
    assert items_kept(before, added) == [
        Violation(13, ("x9",), "the 2 input items in order", "3 items, unexpected ['x9']")
    ]
    assert items_kept(before, _commit(_item("u0"))) == [
        Violation(13, ("u1",), "the 2 input items in order", "1 items, missing ['u1']")
    ]
    assert items_kept(before, _commit(_item("u0"), _item("x9"))) == [
        Violation(
            13, ("u1",), "the 2 input items in order", "2 items, missing ['u1'], unexpected ['x9']"
        )
    ]
    assert items_kept(before, before) == []


def test_a_grown_item_breaks_invariant_3_with_both_counts() -> None:
    """Invariant 3: an aged item that comes out with more tokens is reported, with both counts."""
    aged = _item("t1", state=State.AGED, tokens=3)
    grown = _commit(attrs.evolve(aged, tokens=5))
    assert monotone_tightening(_commit(aged), grown) == [
        Violation(3, ("t1",), "at most 3 tokens", "5 tokens")
    ]
    assert monotone_tightening(_commit(aged), _commit(attrs.evolve(aged, tokens=3))) == []


def test_a_full_item_with_new_text_breaks_invariant_3() -> None:
    """Invariant 3: a full item keeps its text and arguments, even at the same cost."""
    full = _item("t1", tokens=4)
    for changed in (attrs.evolve(full, rendered="other"), attrs.evolve(full, arguments="{}")):
        assert monotone_tightening(_commit(full), _commit(changed)) == [
            Violation(3, ("t1",), "a full item's text unchanged", "changed text")
        ]
    loosened = attrs.evolve(full, state=State.AGED)
    assert monotone_tightening(_commit(loosened), _commit(full)) == [
        Violation(3, ("t1",), "a state at least as tight as 'aged'", "'full'")
    ]
    # Items no longer lined up are invariant 13's to report, not this law's.
    assert monotone_tightening(_commit(loosened), _commit(full, _item("x9"))) == []


def test_a_touched_locked_item_reports_its_new_state_and_reason() -> None:
    """Invariant 4: a locked item changed by a rule is named, with what it became."""
    locked = _item("t1", locked=True)
    touched = attrs.evolve(locked, state=State.AGED, reason="aged")
    free = _item("u1")
    before = _commit(locked, free)
    after = _commit(touched, attrs.evolve(free, state=State.AGED))
    assert locked_untouched(before, after) == [
        Violation(4, ("t1",), "the locked item unchanged", "state 'aged', reason 'aged'")
    ]
    assert locked_untouched(before, before) == []


def test_a_miscounted_commit_breaks_invariant_10() -> None:
    """Invariant 10: the rendered count is expected, the stored total is found."""
    good = _commit(counted(_item("u0"), RULER), counted(_item("u1"), RULER))
    assert one_ruler(good, RULER) == []
    wrong = attrs.evolve(good, total_tokens=good.total_tokens + 5)
    assert one_ruler(wrong, RULER) == [
        Violation(
            10,
            (wrong.id,),
            f"total_tokens == {good.total_tokens} (the rendered count)",
            str(good.total_tokens + 5),
        )
    ]


def _use(call: str, role: str = "assistant") -> Message:
    return Message(role, (TextBlock("calling"), ToolUseBlock(call, "grep", "{}")))


def _result(*calls: str) -> Message:
    return Message("tool", tuple(ToolResultBlock(call, "out") for call in calls))


ORPHAN = ("its tool call in the preceding assistant message", "an orphan tool result")
UNANSWERED = ("a result in the next message", "a tool call without its result")


def test_paired_calls_and_results_are_valid() -> None:
    """Invariant 11: each call answered in the next message breaks nothing."""
    text = Message("user", (TextBlock("hi"),))
    assert protocol_valid([text, _use("c1"), _result("c1"), text, _use("c2"), _result("c2")]) == []


def test_an_orphan_result_after_a_plain_message_is_reported() -> None:
    """Invariant 11: messages without results are passed over, and the checks go on after them."""
    text = Message("user", (TextBlock("hi"),))
    assert protocol_valid([text, text, _result("r9")]) == [Violation(11, ("r9",), *ORPHAN)]


def test_a_result_first_has_no_call_before_it() -> None:
    """Invariant 11: the first message has no preceding one (the last is not before it)."""
    assert protocol_valid([_result("c1"), _use("c1")]) == [
        Violation(11, ("c1",), *ORPHAN),
        Violation(11, ("c1",), *UNANSWERED),
    ]


def test_only_an_assistant_message_calls_tools() -> None:
    """Invariant 11: a call block in a user message does not pair with the result after it."""
    assert protocol_valid([_use("c1", role="user"), _result("c1")]) == [
        Violation(11, ("c1",), *ORPHAN)
    ]


def test_a_repeated_call_id_is_reported() -> None:
    """Invariant 11: the second call with an id already used is named, even when answered."""
    assert protocol_valid([_use("c1"), _result("c1"), _use("c1"), _result("c1")]) == [
        Violation(11, ("c1",), "tool call ids unique in the request", "a repeated tool call id")
    ]


def test_an_unanswered_call_is_reported() -> None:
    """Invariant 11: a call whose id is not among the next message's results is named."""
    both = Message("assistant", (ToolUseBlock("c1", "grep", "{}"), ToolUseBlock("c2", "ls", "")))
    assert protocol_valid([both, _result("c1")]) == [Violation(11, ("c2",), *UNANSWERED)]


def test_a_call_answered_twice_is_reported_once_per_id() -> None:
    """Invariant 11: one result per call; each repeated result id is named once, in order."""
    calls = tuple(ToolUseBlock(call, "grep", "{}") for call in ("c2", "c1", "c3"))
    both = Message("assistant", calls)
    assert protocol_valid([both, _result("c2", "c1", "c2", "c3", "c1", "c1")]) == [
        Violation(11, ("c1",), "one result per tool call", "3 results"),
        Violation(11, ("c2",), "one result per tool call", "2 results"),
    ]
    assert protocol_valid([both, _result("c2", "c1", "c3")]) == []


def test_two_active_summaries_are_counted() -> None:
    """Invariant 12: one summary is fine; two or three are named, with their count."""

    def summary(node: str) -> ContextItem:
        return ContextItem(node, "assistant", state=State.SUMMARY, rendered="[Summary] " + node)

    folded = attrs.evolve(summary("sm_0"), state=State.SUMMARIZED, merged_into="sm_1")
    assert one_summary(_commit()) == []
    assert one_summary(_commit(_item("u0"), folded, summary("sm_1"))) == []
    two = _commit(summary("sm_1"), _item("u0"), summary("sm_2"))
    assert one_summary(two) == [Violation(12, ("sm_1", "sm_2"), "at most one active summary", "2")]
    three = _commit(summary("sm_1"), summary("sm_2"), folded, summary("sm_3"))
    assert one_summary(three) == [
        Violation(12, ("sm_1", "sm_2", "sm_3"), "at most one active summary", "3")
    ]


def test_a_lawful_tightening_with_new_text_keeps_invariant_3() -> None:
    """Invariant 3: an item aged to a shorter text is lawful; only a full item keeps its text."""
    full = counted(ContextItem("t1", "tool", rendered="output " * 40, tool_name="grep"), RULER)
    before = _commit(full)
    aged = counted(attrs.evolve(full, state=State.AGED, rendered="[aged]", reason="aged"), RULER)
    assert monotone_tightening(before, before.replace_items({0: aged})) == []
    # A full item made again, equal text and fewer tokens: not a changed text either.
    again = attrs.evolve(full, tokens=full.tokens - 1)
    assert monotone_tightening(before, before.replace_items({0: again})) == []
