"""The step laws held-out broken rules once slipped past: folding, copying blocks, late edits."""

from __future__ import annotations

import attrs

from ctxrules.check.attach import no_block_expanded
from ctxrules.check.identity import content_id_matches, folded_with_summary
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _commit(*items: ContextItem) -> ContextCommit:
    return ContextCommit("s").with_items([counted(i, RULER) for i in items])


SUMMARY = ContextItem("sm_1", "assistant", state="summary", rendered="we read a.py")
BEFORE = _commit(
    ContextItem("u0", "user", rendered="read a.py", state="summarized", merged_into="sm_1"),
    SUMMARY,
    ContextItem("u1", "user", rendered="now b.py"),
    ContextItem("a1", "assistant", rendered="b.py says hi"),
)


def _fold(commit: ContextCommit, index: int, into: str) -> ContextCommit:
    folded = attrs.evolve(commit.items[index], state=State.SUMMARIZED, merged_into=into)
    return commit.replace_items({index: counted(folded, RULER)})


def test_folding_into_a_summary_left_as_it_was_is_reported() -> None:
    """Invariant 13: u1 folded into sm_1, whose text still says only what it said before."""
    (found,) = folded_with_summary(BEFORE, _fold(BEFORE, 2, "sm_1"))
    assert (found.invariant, found.ids) == (13, ("u1",))
    assert found.expected == "a folded item merged into a summary written in the same step"
    assert found.found == "merged_into='sm_1', a summary left as it was"


def test_folding_with_the_summary_rewritten_passes() -> None:
    """Invariant 13: the same fold with sm_1's text rewritten to cover u1 is no violation."""
    folded = _fold(BEFORE, 2, "sm_1")
    rewritten = counted(attrs.evolve(SUMMARY, rendered="we read a.py, then b.py"), RULER)
    after = folded.replace_items({1: rewritten})
    assert folded_with_summary(BEFORE, after) == []
    # Already folded before: not this step's fold, whatever the summary.
    assert folded_with_summary(BEFORE, BEFORE) == []


BLOCK = (
    ContextItem("attach:s2:c_src", "user", rendered="[attached]", attached_from="c_src"),
    ContextItem("x1", "user", rendered="from elsewhere", attached_from="c_src"),
)


def test_a_block_copied_under_a_new_source_is_invariant_6() -> None:
    """Invariant 6: a rule that appends a copy of an attached block, under any source id."""
    before = _commit(ContextItem("u0", "user", rendered="hi"), *BLOCK)
    alias = [attrs.evolve(i, attached_from="c_src_again") for i in BLOCK]
    after = before.append_items([counted(i, RULER) for i in alias])
    found = no_block_expanded(before, after)
    assert [(v.invariant, v.ids) for v in found] == [
        (6, ("attach:s2:c_src",)),
        (6, ("x1",)),
    ]
    assert found[1].expected == "no copy of an item attached from c_src_again made by a rule"
    assert no_block_expanded(before, before) == []


def test_an_item_edited_after_its_digest_was_taken_is_a_stale_id() -> None:
    """Invariant 2: the item's cached digest says one thing, its fields another."""
    aged = counted(attrs.evolve(BEFORE.items[3], state=State.AGED, rendered="[stub]"), RULER)
    after = BEFORE.replace_items({3: aged})  # the commit takes aged.digest here
    assert content_id_matches(after, BEFORE) == []
    object.__setattr__(aged, "reason", "edited late")
    (found,) = content_id_matches(after, BEFORE)
    assert found.invariant == 2
    assert found.found == "a stale id (the items changed behind the commit's methods)"
