"""Invariant 17 for items built by hand: a pinned item is locked, so no rule tightens it."""

from __future__ import annotations

import attrs

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules.facts import Facts
from ctxrules.rules.tighten import tighten
from ctxrules.rules.tool_aging import age_tool_results
from ctxrules.tokens import HeuristicCounter


def test_a_pinned_item_is_locked_however_it_is_built() -> None:
    """Invariant 17: ``pinned=True`` without ``locked`` still locks; evolving the lock off does not unlock a pin."""
    item = ContextItem("n1", "tool", rendered="never push to main", pinned=True)
    assert item.locked
    assert attrs.evolve(item, locked=False).locked
    assert not item.unpin().locked
    assert item == ContextItem(
        "n1", "tool", rendered="never push to main", pinned=True, locked=True
    )


def test_no_rule_tightens_a_hand_built_pin() -> None:
    """Invariant 17: aging stubs the old result beside it and leaves the hand-built pin whole."""
    facts = Facts(now=10.0, head_turn=20, tokenizer=HeuristicCounter())
    text = "the plan: parse_config then load_rules\n" * 40
    pin = ContextItem("n1", "tool", rendered=text, tokens=400, tool_name="plan", pinned=True)
    other = ContextItem("n2", "tool", rendered=text, tokens=400, tool_name="read")
    assert tighten(pin, State.AGED, facts, rendered="[stub]", reason="demo") is None
    commit = ContextCommit("s").append_items([pin, other])
    aged = age_tool_results(3, 200, 10, 10, ())(commit, facts)
    assert aged.items[0] is pin
    assert aged.items[1].state is State.AGED
