"""Exact outputs of invariant 16's rule law (`handles_named`) and invariant 15's `replaced_reported`."""

from __future__ import annotations

import attrs

from ctxrules.check.laws import RULE_LAWS
from ctxrules.check.prefix import replaced_reported
from ctxrules.check.tightened import changed_pairs, handles_named
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules.handles import fold_handle, folds_line, handle_for, item_handle, with_note

TOOL = ContextItem("t1", "tool", rendered="a long output " * 20, tool_name="cat", tool_call_id="c1")
OTHER = ContextItem("t2", "tool", rendered="other output", tool_name="cat", tool_call_id="c2")
BASE = ContextCommit("s").with_items([TOOL, OTHER])


def _aged(item: ContextItem, text: str, **changes: object) -> ContextItem:
    return attrs.evolve(item, state=State.AGED, rendered=text, **changes)


def test_an_item_naming_its_own_handle_keeps_the_law() -> None:
    """Invariant 16: a stub with the item's own handle, in its text or its arguments."""
    after = BASE.replace_items({0: _aged(TOOL, with_note("[stub]", "t1"))})
    assert handles_named(BASE, after) == []
    in_args = _aged(TOOL, "[stub]", arguments=f'{{"cut": "{handle_for("t1")}"}}')
    assert handles_named(BASE, BASE.replace_items({0: in_args})) == []


def test_a_state_move_that_keeps_the_text_hides_nothing() -> None:
    """Invariant 16: an item aged or cleared with its text kept needs no handle."""
    after = BASE.replace_items({0: attrs.evolve(TOOL, state=State.CLEARED)})
    assert handles_named(BASE, after) == []


def test_a_note_naming_another_item_says_what_it_resolves_to() -> None:
    """Invariant 16: the item, its handle, and the other item the shown handle resolves to."""
    after = BASE.replace_items({0: _aged(TOOL, with_note("[stub]", "t2"))})
    assert [(v.invariant, v.ids, v.expected, v.found) for v in handles_named(BASE, after)] == [
        (
            16,
            ("t1", handle_for("t1")),
            f"the item's handle {handle_for('t1')} named in its text",
            f"{handle_for('t2')}, which resolves to item t2",
        )
    ]


def test_no_handle_and_an_unknown_handle_are_told_apart() -> None:
    """Invariant 16: 'no handle' for a bare placeholder; 'nothing' for a handle of no item."""
    bare = BASE.replace_items({0: _aged(TOOL, "[cleared]")})
    assert [v.found for v in handles_named(BASE, bare)] == ["no handle"]
    stray = BASE.replace_items({0: _aged(TOOL, with_note("[stub]", "t9"))})
    assert [v.found for v in handles_named(BASE, stray)] == [
        f"{handle_for('t9')}, which resolves to nothing"
    ]


def test_an_attached_copy_needs_the_handle_of_its_attachment() -> None:
    """Invariant 16: the node id's handle is wrong for a copy attached from another commit."""
    copy = attrs.evolve(TOOL, attached_from="c_src")
    base = ContextCommit("s").with_items([copy])
    wrong = base.replace_items({0: _aged(copy, with_note("[stub]", "t1"))})
    right = base.replace_items({0: _aged(copy, f"[stub] [recall {item_handle(copy)}]")})
    assert [v.ids for v in handles_named(base, wrong)] == [("t1", item_handle(copy))]
    assert handles_named(base, right) == []


def _folded() -> ContextCommit:
    members = [attrs.evolve(i, state=State.SUMMARIZED, merged_into="sm_1") for i in (TOOL, OTHER)]
    line = folds_line([("tool", "t1"), ("tool", "t2")], ["t1", "t2"])
    summary = ContextItem("sm_1", "assistant", state=State.SUMMARY, rendered=f"facts\n{line}")
    return ContextCommit("s").with_items([*members, summary])


def test_a_summary_cut_so_its_folds_line_is_lost_unnames_its_items() -> None:
    """Invariant 16: each item the summary named before is reported, by its own handle."""
    before = _folded()
    cut = before.replace_items({2: attrs.evolve(before.items[2], rendered="facts")})
    found = handles_named(before, cut)
    assert [v.ids for v in found] == [("t1", handle_for("t1")), ("t2", handle_for("t2"))]
    assert found[0].expected == "its handle or the fold's named by summary sm_1"
    assert found[0].found == "no handle"
    # Rewritten but still naming the fold: kept.
    fold = fold_handle(["t1", "t2"])
    kept = before.replace_items({2: attrs.evolve(before.items[2], rendered=f"[recall {fold}]")})
    assert handles_named(before, kept) == []


def test_an_item_folded_by_the_rule_must_be_named_by_its_summary() -> None:
    """Invariant 16: folding into a summary that names neither the item nor the fold."""
    summary = ContextItem("sm_1", "assistant", state=State.SUMMARY, rendered="facts")
    before = ContextCommit("s").with_items([TOOL, summary])
    folded = attrs.evolve(TOOL, state=State.SUMMARIZED, merged_into="sm_1")
    after = before.replace_items({0: folded, 1: attrs.evolve(summary, rendered="new facts")})
    assert [v.ids for v in handles_named(before, after)] == [("t1", handle_for("t1"))]
    named = attrs.evolve(summary, rendered=f"new facts [recall {handle_for('t1')}]")
    assert handles_named(before, before.replace_items({0: folded, 1: named})) == []


def test_changed_pairs_skips_kept_and_moved_items() -> None:
    """Only items changed in place are yielded; a reorder is items_kept's to report."""
    after = BASE.replace_items({1: attrs.evolve(OTHER, reason="x")})
    assert [(p, new.reason) for p, _, new in changed_pairs(BASE, after)] == [(1, "x")]
    assert list(changed_pairs(BASE, BASE.with_items([OTHER, TOOL]))) == []
    assert list(changed_pairs(BASE, BASE.with_items([TOOL]))) == []


def test_a_change_left_out_of_the_replaced_report_breaks_invariant_15() -> None:
    """Invariant 15: batching restores only the reported positions."""
    base = BASE.begin_generation()
    stubbed = base.replace_items({0: _aged(TOOL, with_note("[stub]", "t1"))})
    assert replaced_reported(base, stubbed) == []
    assert replaced_reported(BASE, BASE.replace_items({0: TOOL})) == []  # no report kept
    [unreported] = replaced_reported(base, stubbed.begin_generation())
    assert (unreported.ids, unreported.found) == (
        ("t1",),
        "1 changed and not reported (positions [0])",
    )
    earlier = base.replace_items({1: OTHER})
    [dropped] = replaced_reported(earlier, attrs.evolve(earlier, replaced=()))
    assert (dropped.expected, dropped.found) == (
        "the positions replaced before the rule still reported",
        "positions [1] dropped",
    )


def test_both_laws_are_in_the_table() -> None:
    """The laws are data: invariants 16 and 15 each have their entry in RULE_LAWS."""
    what = {law.what: law.invariant for law in RULE_LAWS}
    assert what["tightened items name their handle"] == 16
    assert what["changes reported as replaced"] == 15
