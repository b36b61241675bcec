"""Each predicate of `ctxrules.check` on hand-made commits: what it reports, exactly, and when not."""

from __future__ import annotations

import attrs
import pytest

from ctxrules.check import attached_once, items_kept, one_summary, rule_step
from ctxrules.check.identity import (
    content_id_matches,
    identity_kept,
    pairing_kept,
    summaries_cover,
)
from ctxrules.check.laws import RULE_LAWS, Law, rule_laws_broken
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.rules import Facts
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
FACTS = Facts(tokenizer=RULER)


def _commit(*items: ContextItem) -> ContextCommit:
    return ContextCommit("s").with_items([counted(i, RULER) for i in items])


def _tool(node: str, call: str, turn: int = 0, **fields: object) -> ContextItem:
    return ContextItem(node, "tool", rendered="out " + node, tool_name="grep", tool_call_id=call,
                       turn=turn, **fields)  # type: ignore[arg-type]  # fmt: skip


BASE = _commit(
    ContextItem("u0", "user", rendered="hi"),
    ContextItem("a0", "assistant", rendered="let me look"),
    _tool("t1", "call_1"),
    _tool("t2", "call_2"),
)


def test_a_clean_step_breaks_no_law() -> None:
    """Invariants 2-13: a commit compared with itself breaks nothing, under every law."""
    assert rule_laws_broken(BASE, BASE, FACTS) == []
    assert all(law.broken(BASE, BASE, FACTS) == [] for law in RULE_LAWS)


def test_a_reorder_names_the_moved_item() -> None:
    """Invariant 13: two swapped items are reported as a reorder, naming both ids."""
    swapped = BASE.with_items([BASE.items[0], BASE.items[1], BASE.items[3], BASE.items[2]])
    (found,) = items_kept(BASE, swapped)
    assert found.invariant == 13
    assert found.ids == ("t1", "t2")
    assert found.expected == "the input order (t1 at position 2)"
    assert found.found == "t2 moved there (items reordered)"
    # The positions no longer line up, so the item-by-item laws stay silent.
    assert pairing_kept(BASE, swapped) == []
    assert identity_kept(BASE, swapped) == []


def test_a_dropped_item_is_missing() -> None:
    """Invariant 13: a dropped item is named as missing."""
    (found,) = items_kept(BASE, BASE.with_items(BASE.items[:-1]))
    assert found.ids == ("t2",)
    assert found.found == "3 items, missing ['t2']"


def test_a_changed_call_id_breaks_pairing() -> None:
    """Invariant 11: a new tool call id (even a unique one) is reported with old and new."""
    after = BASE.replace_items({3: counted(attrs.evolve(BASE.items[3], tool_call_id="x"), RULER)})
    (found,) = pairing_kept(BASE, after)
    assert (found.invariant, found.ids) == (11, ("t2",))
    assert found.expected == "tool call id 'call_2' of tool 'grep' kept"
    assert found.found == "'x' of tool 'grep'"
    renamed = BASE.replace_items({2: attrs.evolve(BASE.items[2], tool_name="cat")})
    assert [v.ids for v in pairing_kept(BASE, renamed)] == [("t1",)]


@pytest.mark.parametrize(
    ("field", "value"), [("role", "user"), ("turn", 3), ("created_at", 9.0), ("is_anchor", True)]
)
def test_identity_fields_stay(field: str, value: object) -> None:
    """Invariant 13: role, turn, creation time and anchor flag are the node's, not the rule's."""
    after = BASE.replace_items({2: attrs.evolve(BASE.items[2], **{field: value})})
    (found,) = identity_kept(BASE, after)
    assert (found.invariant, found.ids) == (13, ("t1",))
    assert found.found == f"[{field!r}] changed"
    assert found.expected == "the item's node unchanged"


def test_unlocking_breaks_invariant_4() -> None:
    """Invariant 4: a locked item that comes out unlocked is reported."""
    locked = BASE.replace_items({0: attrs.evolve(BASE.items[0], locked=True)})
    (found,) = identity_kept(locked, BASE)
    assert (found.invariant, found.ids, found.found) == (4, ("u0",), "unlocked")
    assert found.expected == "the item still locked"
    assert identity_kept(BASE, locked) == []


def test_folded_items_must_reach_the_active_summary() -> None:
    """Invariant 13: a summarized item whose summary is missing or replaced is uncovered."""
    summary = ContextItem("sm_1", "assistant", state=State.SUMMARY, rendered="[Summary]")
    folded = attrs.evolve(BASE.items[0], state=State.SUMMARIZED, merged_into="sm_1")
    assert summaries_cover(_commit(folded, summary)) == []
    (lost,) = summaries_cover(_commit(folded))
    assert (lost.invariant, lost.ids, lost.found) == (13, ("u0",), "merged_into='sm_1'")
    assert lost.expected == "a folded item covered by the active summary"
    replaced = attrs.evolve(summary, state=State.SUMMARIZED, merged_into="sm_2")
    newer = ContextItem("sm_2", "assistant", state=State.SUMMARY, rendered="[Summary] 2")
    assert summaries_cover(_commit(folded, replaced, newer)) == []
    assert len(summaries_cover(_commit(folded, replaced))) == 1
    looping = attrs.evolve(summary, state=State.SUMMARIZED, merged_into="sm_1")
    assert len(summaries_cover(_commit(folded, looping))) == 1


def test_a_stale_content_id_is_reported() -> None:
    """Invariant 2: a commit changed behind its methods keeps an id its content does not give."""
    assert content_id_matches(BASE) == []
    stale = attrs.evolve(BASE, items=BASE.items.set(0, ContextItem("u0", "user", rendered="x")))
    (found,) = content_id_matches(stale)
    assert (found.invariant, found.ids) == (2, (stale.id,))
    fresh = attrs.evolve(stale, digest=-1).id
    assert found.expected == f"the id recomputed from the content ({fresh[:14]}…)"
    assert found.found == "a stale id (the items changed behind the commit's methods)"
    # Rebuilt from its JSON, the stale commit is equal item for item but gets another id.
    from ctxrules.check import Violation, content_addressed  # noqa: PLC0415

    assert content_addressed(BASE) == []
    assert content_addressed(stale) == [
        Violation(
            2,
            (stale.id,),
            "the same commit and id when rebuilt from its content",
            "a different one",
        )
    ]


def test_a_state_law_reports_only_what_the_rule_added() -> None:
    """Invariant 12: a second summary already in the input is not the rule's fault."""
    two = _commit(
        ContextItem("sm_1", "assistant", state=State.SUMMARY, rendered="a"),
        ContextItem("sm_2", "assistant", state=State.SUMMARY, rendered="b"),
    )
    law = next(law for law in RULE_LAWS if law.invariant == 12)
    assert law.broken(two, two, FACTS) == []
    assert [v.invariant for v in law.broken(BASE, two, FACTS)] == [12]
    assert one_summary(two)[0].ids == ("sm_1", "sm_2")


def test_a_law_plugs_in_by_one_entry() -> None:
    """A new law is one more `Law` in the tuple passed to `rule_laws_broken`."""
    from ctxrules.check import Violation  # noqa: PLC0415 - only this test needs it

    never_empty = Law(
        13,
        "never empty",
        state=lambda c, _f: [] if c.items else [Violation(13, (), "items", "none")],
    )
    empty = ContextCommit("s")
    assert rule_laws_broken(BASE, empty, FACTS, (never_empty,))[0].expected == "items"
    assert rule_laws_broken(empty, empty, FACTS, (never_empty,)) == []
    assert Law(1, "no check").broken(BASE, empty, FACTS) == []


def test_a_copied_block_breaks_invariant_6() -> None:
    """Invariant 6: the same node attached twice from one source, or an unrecorded source."""
    inner = ContextItem("x1", "user", rendered="a", attached_from="c_src")
    once = attrs.evolve(_commit(inner), attached=BASE.attached.add("c_src"))
    assert attached_once(once) == []
    twice = once.append_items([counted(inner, RULER)])
    assert [v.ids for v in attached_once(twice)] == [("x1",)]
    assert [v.ids for v in attached_once(_commit(inner))] == [("c_src",)]


def test_rule_step_is_the_three_item_laws() -> None:
    """Invariants 13, 3 and 4 together: a loosened locked item shows 3 and 4."""
    aged = attrs.evolve(BASE.items[2], state=State.AGED, locked=True)
    before = BASE.replace_items({2: aged})
    after = BASE.replace_items({2: attrs.evolve(aged, state=State.FULL)})
    assert sorted(v.invariant for v in rule_step(before, after)) == [3, 4]


def test_every_broken_law_is_reported_in_order() -> None:
    """Every law is evaluated on every output: two broken laws give two violations, in order."""
    from ctxrules.check import Violation  # noqa: PLC0415 - only these tests need it

    first = Law(3, "first", step=lambda _b, _a, _f: [Violation(3, ("a",), "x", "y")])
    second = Law(4, "second", step=lambda _b, _a, _f: [Violation(4, ("b",), "x", "y")])
    found = rule_laws_broken(BASE, BASE, FACTS, (first, second))
    assert [v.invariant for v in found] == [3, 4]


def test_a_state_law_is_given_the_facts() -> None:
    """A law about one commit sees the facts the rule saw, for the output and for the input."""
    from ctxrules.check import Violation  # noqa: PLC0415

    seen: list[tuple[str, Facts]] = []

    def state(commit: ContextCommit, facts: Facts) -> list[Violation]:
        seen.append((commit.id, facts))
        return [Violation(10, (), "counted by " + type(facts.tokenizer).__name__, commit.id)]

    other = BASE.append_items([counted(ContextItem("u9", "user", rendered="more"), RULER)])
    (found,) = Law(10, "reads facts", state=state).broken(BASE, other, FACTS)
    assert found.expected == "counted by HeuristicCounter"
    assert seen == [(other.id, FACTS), (BASE.id, FACTS)]


def test_a_request_extends_itself_and_not_a_shorter_one() -> None:
    """Invariant 15's measure: an equal request extends; a cut one does not, even as a prefix."""
    from ctxrules.check import extends  # noqa: PLC0415
    from ctxrules.render import Message, TextBlock  # noqa: PLC0415

    a, b = Message("user", (TextBlock("a"),)), Message("assistant", (TextBlock("b"),))
    assert extends((a, b), (a, b))
    assert not extends((a, b), (a,))
    assert extends((), ())


def test_prefix_stability_names_a_cut_and_the_first_five_rewritten() -> None:
    """Invariant 15 between batch points: a shorter child, or items already sent rewritten."""
    from ctxrules.check import Violation, prefix_stable  # noqa: PLC0415

    long = _commit(*(ContextItem(f"u{n}", "user", rendered=f"text {n}") for n in range(7)))
    assert prefix_stable(long, long, batched=False) == []
    cut = long.with_items(long.items[:2])
    assert prefix_stable(long, cut, batched=False) == [
        Violation(15, (cut.id,), "at least the parent's 7 items between batch points", "2 items")
    ]
    rewritten = long.with_items(
        [counted(attrs.evolve(i, rendered="new"), RULER) for i in long.items[:6]] + [long.items[6]]
    )
    assert prefix_stable(long, rewritten, batched=False) == [
        Violation(
            15,
            ("u0", "u1", "u2", "u3", "u4"),
            "items already sent left unchanged between batch points",
            "6 rewritten",
        )
    ]


def test_append_only_reports_a_reordered_history() -> None:
    """Invariant 1: earlier nodes must come first in the same order; an unchanged graph passes."""
    from ctxrules.check import Violation, append_only  # noqa: PLC0415
    from ctxrules.dag import Call, Graph  # noqa: PLC0415

    before = Graph().append(Call("u1", "user", output="hi")).unwrap()
    assert append_only(before, before) == []
    other = Graph().append(Call("x1", "user", output="first")).unwrap()
    after = other.append(Call("u1", "user", output="hi")).unwrap()
    found = append_only(before, after)
    assert found[0] == Violation(
        1, (), "the earlier nodes first, in the same order", "a different order"
    )


def test_append_only_allows_one_completion_and_nothing_else() -> None:
    """Invariant 1: a running node may be completed once; a node gone or changed is reported."""
    from ctxrules.check import Violation, append_only  # noqa: PLC0415
    from ctxrules.dag import Call, Graph  # noqa: PLC0415

    before = Graph().append(Call("u1", "user", output="hi")).unwrap()
    before = before.append(Call("t1", "tool", caller=None, status="running")).unwrap()
    completed = before.complete("t1", "out").unwrap()
    assert append_only(before, completed) == []
    assert append_only(completed, completed.complete("t1", "again").value_or(completed)) == []
    changed = attrs.evolve(
        completed, nodes=completed.nodes.set("u1", attrs.evolve(completed.nodes["u1"], input="x"))
    )
    assert append_only(completed, changed) == [
        Violation(1, ("u1",), "the node unchanged (or completed once)", "changed content")
    ]
    rewritten = attrs.evolve(
        completed, nodes=completed.nodes.set("t1", attrs.evolve(completed.nodes["t1"], output="x"))
    )
    assert append_only(completed, rewritten) == [
        Violation(1, ("t1",), "the node unchanged (or completed once)", "changed content")
    ]
    gone = attrs.evolve(completed, nodes=completed.nodes.delete("t1"))
    assert append_only(completed, gone) == [Violation(1, ("t1",), "the node kept", "the node gone")]


def test_stored_commits_are_each_checked_against_every_predicate() -> None:
    """Invariants 5, 6, 10 and 12 on stored commits: each commit's findings are all kept."""
    from ctxrules.check.recorded import verify_commits  # noqa: PLC0415
    from ctxrules.dag import Call, Graph  # noqa: PLC0415

    clean = Graph().append(Call("u0", "user", output="hi")).unwrap()
    graph = clean.append(Call("sm_1", "assistant", output="s", predecessor="u0")).unwrap()
    good = _commit(ContextItem("u0", "user", rendered="hi"))
    assert verify_commits([good, good], clean, RULER) == []
    miscounted = attrs.evolve(good, total_tokens=good.total_tokens + 5)
    summaries = _commit(
        ContextItem("sm_1", "assistant", state=State.SUMMARY, rendered="a"),
        ContextItem("sm_2", "assistant", state=State.SUMMARY, rendered="b"),
        ContextItem("x1", "user", rendered="copied", attached_from="c_src"),
    )
    found = verify_commits([miscounted, summaries], graph, RULER)
    assert [(v.invariant, v.ids, v.expected) for v in found] == [
        (10, (miscounted.id,), f"total_tokens == {good.total_tokens} (the rendered count)"),
        (5, ("sm_1",), "no DAG node with a summary id"),
        (12, ("sm_1", "sm_2"), "at most one active summary"),
        (6, ("c_src",), "every attached source recorded in commit.attached"),
        (5, ("sm_1",), "a summary only in commits"),
        (5, ("sm_1",), "no DAG node with a summary id"),
    ]


def test_checkout_purity_needs_the_same_graph_and_running_set() -> None:
    """Invariant 9: a checkout that appends to the graph or changes the running set is reported."""
    from pyrsistent import pset  # noqa: PLC0415

    from ctxrules.check import Violation, checkout_pure  # noqa: PLC0415
    from ctxrules.dag import Call, Graph, Session  # noqa: PLC0415

    graph = Graph().append(Call("u1", "user", output="hi")).unwrap()
    before = Session("s", graph=graph, head="u1")
    assert checkout_pure(before, attrs.evolve(before, head=None)) == []
    rerun = attrs.evolve(before, running=pset(["u1"]))
    appended = attrs.evolve(before, graph=graph.append(Call("u2", "user", output="x")).unwrap())
    expected = Violation(9, ("u1",), "the same graph, nothing appended or rerun", "a changed graph")
    assert checkout_pure(before, rerun) == [expected]
    assert checkout_pure(before, appended) == [expected]
    assert checkout_pure(before, attrs.evolve(appended, head=None))[0].ids == ("",)


def test_impure_rendering_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """Invariant 8 for rendering: different messages twice, or no round trip, are reported."""
    from returns.result import Failure  # noqa: PLC0415

    from ctxrules.check import (  # noqa: PLC0415
        Violation,
        history,
        render_pure,
    )

    assert render_pure(BASE) == []
    expected = [Violation(8, (BASE.id,), "equal messages for equal commits", "different messages")]
    with monkeypatch.context() as patch:
        patch.setattr(history, "commit_from_json", lambda _json: Failure("unreadable"))
        assert render_pure(BASE) == expected
    calls = iter(range(100))
    monkeypatch.setattr(history, "render_commit", lambda _commit: (next(calls),))
    assert render_pure(BASE) == expected
