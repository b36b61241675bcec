"""Invariant 17 as a rule law: a rule that tightens a pinned item is caught, naming the item."""

from __future__ import annotations

import attrs

from ctxrules.check import Violation, pins_kept, pins_sent
from ctxrules.check.laws import RULE_LAWS, rule_laws_broken
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted, render_commit
from ctxrules.rules import Facts
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _clear_everything(commit: ContextCommit, _facts: Facts) -> ContextCommit:
    """A broken rule: clears every item, pinned or not (it never looks at locked)."""
    changes = {
        i: counted(
            attrs.evolve(item, state=State.CLEARED, rendered="[cleared]", reason="broken"), RULER
        )
        for i, item in enumerate(commit.items)
    }
    return commit.replace_items(changes)


def test_the_pins_law_is_a_rule_law() -> None:
    """Invariant 17 is checked for every rule, beside invariant 4."""
    assert any(law.invariant == 17 for law in RULE_LAWS)


def test_a_rule_that_clears_a_pin_breaks_17_naming_the_item() -> None:
    """The violation of 17 names the pinned node; the unpinned item is not reported under 17."""
    pinned = counted(ContextItem("task", "user", rendered="never push to main").pin(), RULER)
    plain = counted(ContextItem("t1", "tool", rendered="output " * 50, tool_name="grep"), RULER)
    before = ContextCommit("s").append_items([pinned, plain])
    found = rule_laws_broken(before, _clear_everything(before, Facts()), Facts(tokenizer=RULER))
    seventeen = [v for v in found if v.invariant == 17]
    assert [v.ids for v in seventeen] == [("task",)]
    assert {v.invariant for v in found} >= {4, 17}


def test_a_rule_that_leaves_pins_alone_passes_17() -> None:
    """Clearing only unlocked items keeps the pin: no violation of 17."""

    def lawful(commit: ContextCommit, facts: Facts) -> ContextCommit:
        out = _clear_everything(commit, facts)
        return out.replace_items({i: it for i, it in enumerate(commit.items) if it.locked})

    pinned = counted(ContextItem("task", "user", rendered="never push to main").pin(), RULER)
    before = ContextCommit("s").append_items([pinned])
    found = rule_laws_broken(before, lawful(before, Facts()), Facts(tokenizer=RULER))
    assert not [v for v in found if v.invariant == 17]


def test_a_pin_after_an_unpinned_item_is_checked() -> None:
    """Invariant 17: every pin is looked at, wherever it stands (not only up to the first plain item)."""
    plain = counted(ContextItem("u1", "user", rendered="hello"), RULER)
    pinned = counted(ContextItem("task", "user", rendered="never push to main").pin(), RULER)
    before = ContextCommit("s").append_items([plain, pinned])
    after = before.replace_items({1: attrs.evolve(pinned, rendered="push")})
    assert [(v.invariant, v.ids) for v in pins_kept(before, after)] == [(17, ("task",))]


def test_a_dropped_pin_is_reported_as_dropped() -> None:
    """Invariant 17: a pin missing from the output is named, with what was found."""
    pinned = counted(ContextItem("task", "user", rendered="never push to main").pin(), RULER)
    plain = counted(ContextItem("u1", "user", rendered="hello"), RULER)
    before = ContextCommit("s").append_items([pinned, plain])
    after = ContextCommit("s").append_items([plain])
    assert pins_kept(before, after) == [
        Violation(17, ("task",), "the pinned item unchanged", "dropped")
    ]


def _pinned() -> ContextItem:
    return counted(ContextItem("task", "user", rendered="never push to main").pin(), RULER)


def test_a_changed_pin_is_reported_with_its_state_and_reason() -> None:
    """Invariant 17: a pin still pinned but with new text is named, with its state and reason."""
    before = ContextCommit("s").append_items([_pinned()])
    new = attrs.evolve(_pinned(), rendered="push", reason="edited")
    after = before.replace_items({0: new})
    assert pins_kept(before, after) == [
        Violation(17, ("task",), "the pinned item unchanged", "state 'full', reason 'edited'")
    ]


def test_unpinning_ends_a_pin_but_not_in_the_same_step_as_tightening() -> None:
    """Invariant 17: an unpinned item kept full is lawful; unpinned and aged at once is not."""
    before = ContextCommit("s").append_items([_pinned()])
    unpinned = attrs.evolve(_pinned(), pinned=False)
    assert pins_kept(before, before.replace_items({0: unpinned})) == []
    aged = attrs.evolve(unpinned, state=State.AGED, rendered="never", reason="aged")
    assert pins_kept(before, before.replace_items({0: aged})) == [
        Violation(
            17, ("task",), "the pinned item unchanged", "unpinned and 'aged' in the same step"
        )
    ]


def test_a_pin_missing_from_the_request_is_named() -> None:
    """Invariant 17: every request holds each pin whole; one left out is named."""
    commit = ContextCommit("s").append_items([_pinned()])
    assert pins_sent(commit, []) == [
        Violation(17, ("task",), "whole in every request", "missing from the request")
    ]


def test_only_pins_must_be_in_the_request() -> None:
    """Invariant 17 asks nothing of an unpinned item: one left out of the request is no violation."""
    loose = counted(ContextItem("note", "user", rendered="an old remark"), RULER)
    commit = ContextCommit("s").append_items([loose, _pinned()])
    sent = list(render_commit(commit.with_items([_pinned()])))
    assert pins_sent(commit, sent) == []
