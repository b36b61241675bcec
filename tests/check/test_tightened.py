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


def _note(text: str, *handles: str) -> str:
    return text + "".join(f" [recall {h}]" for h in handles)


def test_every_changed_item_is_looked_at_whatever_came_before() -> None:
    """Invariant 16: kept items, full ones, summaries and folds before it do not end the scan."""
    summary = ContextItem("sm_1", "assistant", state=State.SUMMARY, rendered="facts")
    items = [
        ContextItem("u0", "user", rendered="hello"),
        attrs.evolve(TOOL, source_node_id="t0"),
        TOOL,
        OTHER,
        ContextItem("f1", "tool", rendered="folded text", tool_name="cat", tool_call_id="c9"),
        summary,
        ContextItem("t3", "tool", rendered="last output " * 9, tool_name="cat", tool_call_id="c3"),
    ]
    before = ContextCommit("s").with_items(items)
    changes = {
        0: attrs.evolve(items[0], reason="seen"),  # full, changed: nothing to name
        1: attrs.evolve(items[1], state=State.CLEARED),  # text kept
        2: _aged(TOOL, with_note("[stub]", "t1")),  # names its own handle
        4: attrs.evolve(items[4], state=State.SUMMARIZED, merged_into="sm_1"),
        5: attrs.evolve(summary, rendered=_note("facts", handle_for("f1"))),
        6: _aged(items[6], "[stub]"),
    }
    found = handles_named(before, before.replace_items(changes))
    assert [(v.invariant, v.ids, v.found) for v in found] == [
        (16, ("t3", handle_for("t3")), "no handle")
    ]


def test_what_each_kind_of_handle_resolves_to_is_said() -> None:
    """Invariant 16: an attached copy, a summary, a fold and a summary no longer present."""
    copy = ContextItem("x1", "tool", rendered="copied", attached_from="c_src", tool_call_id="cx")
    folded = attrs.evolve(OTHER, state=State.SUMMARIZED, merged_into="sm_1")
    gone = ContextItem("g1", "user", state=State.SUMMARIZED, merged_into="sm_0", rendered="old")
    summary = ContextItem("sm_1", "assistant", state=State.SUMMARY, rendered="facts")
    before = ContextCommit("s").with_items([TOOL, copy, folded, gone, summary])
    shown = (item_handle(copy), handle_for("sm_1"), fold_handle(["t2"]), handle_for("sm_0"))
    after = before.replace_items({0: _aged(TOOL, _note("[stub]", *shown))})
    [violation] = handles_named(before, after)
    assert violation.found == (
        f"{shown[0]}, which resolves to item x1 attached from c_src; "
        f"{shown[1]}, which resolves to summary sm_1; "
        f"{shown[2]}, which resolves to the fold of sm_1"
    )
    only_gone = before.replace_items({0: _aged(TOOL, _note("[stub]", handle_for("sm_0")))})
    assert [v.found for v in handles_named(before, only_gone)] == [
        f"{handle_for('sm_0')}, which resolves to summary sm_0"
    ]


def test_a_summary_that_named_items_one_by_one_must_keep_naming_them() -> None:
    """Invariant 16: a rewrite that drops the items' own handles; the report says what it shows."""
    members = [attrs.evolve(i, state=State.SUMMARIZED, merged_into="sm_1") for i in (TOOL, OTHER)]
    summary = ContextItem(
        "sm_1",
        "assistant",
        state=State.SUMMARY,
        rendered=_note("facts", handle_for("t1"), handle_for("t2")),
    )
    before = ContextCommit("s").with_items([*members, summary])
    after = before.replace_items(
        {2: attrs.evolve(summary, rendered=_note("facts", handle_for("t1"), handle_for("n9")))}
    )
    assert [(v.invariant, v.ids, v.expected, v.found) for v in handles_named(before, after)] == [
        (
            16,
            ("t2", handle_for("t2")),
            "its handle or the fold's named by summary sm_1",
            (
                f"{handle_for('t1')}, which resolves to item t1; "
                f"{handle_for('n9')}, which resolves to nothing"
            ),
        )
    ]


def test_an_item_folded_into_a_standing_or_missing_summary_is_reported() -> None:
    """Invariant 16: folded into a summary left as it was, or into none at all."""
    summary = ContextItem("sm_1", "assistant", state=State.SUMMARY, rendered="facts")
    before = ContextCommit("s").with_items([TOOL, OTHER, summary])
    standing = before.replace_items(
        {0: attrs.evolve(TOOL, state=State.SUMMARIZED, merged_into="sm_1")}
    )
    assert [(v.ids, v.found) for v in handles_named(before, standing)] == [
        (("t1", handle_for("t1")), "no handle")
    ]
    nowhere = before.replace_items(
        {
            0: attrs.evolve(TOOL, state=State.SUMMARIZED, merged_into="sm_9"),
            1: attrs.evolve(OTHER, state=State.SUMMARIZED),
        }
    )
    assert [(v.ids[0], v.expected) for v in handles_named(before, nowhere)] == [
        ("t1", "its handle or the fold's named by summary sm_9"),
        ("t2", "its handle or the fold's named by summary "),
    ]


def test_at_most_three_shown_handles_are_reported() -> None:
    """The report lists the first three handles a text shows."""
    shown = [handle_for(f"n{k}") for k in range(4)]
    after = BASE.replace_items({0: _aged(TOOL, _note("[stub]", *shown))})
    [violation] = handles_named(BASE, after)
    assert violation.found.count("which resolves to") == 3


def test_the_replaced_report_is_exact_and_cut_at_five() -> None:
    """Invariant 15: the violation's number, ids, texts and the first five positions of many."""
    items = [ContextItem(f"n{k}", "user", rendered=f"m{k}") for k in range(7)]
    base = ContextCommit("s").with_items(items).begin_generation()
    changed = attrs.evolve(
        base.replace_items({k: attrs.evolve(items[k], reason="x") for k in range(7)}), replaced=()
    )
    [violation] = replaced_reported(base, changed)
    assert (violation.invariant, violation.ids, violation.expected, violation.found) == (
        15,
        ("n0", "n1", "n2", "n3", "n4"),
        "every changed position among those reported replaced",
        "7 changed and not reported (positions [0, 1, 2, 3, 4])",
    )
    many = attrs.evolve(base, replaced=(6, 5, 4, 3, 2, 1))
    [dropped] = replaced_reported(many, attrs.evolve(base, replaced=()))
    assert (dropped.invariant, dropped.ids, dropped.found) == (
        15,
        (),
        "positions [1, 2, 3, 4, 5] dropped",
    )
    # A rule that dropped an item is items_kept's to report, not a crash here.
    shorter = attrs.evolve(ContextCommit("s").with_items(items[:3]), replaced=())
    assert replaced_reported(base, shorter) == []


def test_changed_pairs_goes_on_past_a_replaced_item() -> None:
    """A position holding another item is passed over, and a change after it still yielded."""
    third = ContextItem("t3", "tool", rendered="third", tool_name="cat", tool_call_id="c3")
    before = BASE.append_items([third])
    after = before.with_items([OTHER, TOOL, attrs.evolve(third, reason="x")])
    assert [(p, new.reason) for p, _, new in changed_pairs(before, after)] == [(2, "x")]
