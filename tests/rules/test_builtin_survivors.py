"""Exact behaviour of the built-in rules that a mutation run of ``rules/`` found untested.

The laws (invariants 3 and 4) hold whatever a rule decides; these tests pin what it decides:
the reasons items are given, protected tools, the recall notes that ``handles`` switches,
the caps on results and arguments at their exact limits, and where each rule's mark lands.
"""

from __future__ import annotations

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.rules import Facts
from ctxrules.rules.gates import gate_placeholder, gate_tool_results
from ctxrules.rules.handles import item_handle, recall_note, with_note
from ctxrules.rules.idle import IDLE_PLACEHOLDER, clear_idle
from ctxrules.rules.tool_aging import age_tool_results, cap_marker, cap_tool_result, tool_stub
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
FACTS = Facts(now=1_000.0, head_turn=10, tokenizer=RULER)
#: An aged result's text, longer than what clearing puts in its place.
STUB = "[tool grep] output: " + "y " * 100


def _tool(node: str, text: str = "x " * 600, **fields: object) -> ContextItem:
    fields.setdefault("tool_name", "grep")
    item = ContextItem(node, "tool", rendered=text, tool_call_id="c_" + node,
                       **fields)  # type: ignore[arg-type]  # fmt: skip
    return counted(item, RULER)


def _commit(*items: ContextItem) -> ContextCommit:
    return ContextCommit("s").with_items(items)


def test_a_gated_result_says_gated_and_names_its_handle() -> None:
    """The gate's placeholder gives the old size and the recall handle; the reason is ``gated``."""
    item = _tool("t")
    out = gate_tool_results(1, 0.0, 1, 0, ())(_commit(item), FACTS)
    gated = out.items[0]
    assert (gated.state, gated.reason) == (State.CLEARED, "gated")
    assert gated.rendered == with_note(gate_placeholder(item.tokens), "t")


def test_the_gate_leaves_out_the_handle_when_handles_are_off() -> None:
    """With ``handles=False`` the gate's placeholder has no recall note."""
    item = _tool("t")
    out = gate_tool_results(1, 0.0, 1, 0, (), handles=False)(_commit(item), FACTS)
    assert out.items[0].rendered == gate_placeholder(item.tokens)


def test_the_gate_passes_over_protected_tools_and_cleared_items() -> None:
    """A protected tool's result and an item already cleared are left exactly as they are."""
    todo = _tool("p", tool_name="TodoWrite")
    cleared = _tool("c", text=IDLE_PLACEHOLDER, state=State.CLEARED, reason="idle")
    out = gate_tool_results(1, 0.0, 1, 0, ("todo_write",))(_commit(todo, cleared), FACTS)
    assert out.items[0] == todo
    assert out.items[1] == cleared


def test_an_idle_result_is_cleared_with_reason_idle_and_its_handle() -> None:
    """An aged result idle long enough shows the placeholder and its handle; the reason is ``idle``."""
    aged = _tool("t", text=STUB, state=State.AGED, changed_at=0.0)
    out = clear_idle(60.0, IDLE_PLACEHOLDER, ())(_commit(aged), FACTS)
    assert (out.items[0].state, out.items[0].reason) == (State.CLEARED, "idle")
    assert out.items[0].rendered == with_note(IDLE_PLACEHOLDER, "t")
    off = clear_idle(60.0, IDLE_PLACEHOLDER, (), handles=False)(_commit(aged), FACTS)
    assert off.items[0].rendered == IDLE_PLACEHOLDER


def test_idle_clearing_goes_past_settled_items() -> None:
    """A message and a cleared result before an idle one are passed over, and the mark ends past all."""
    user = counted(ContextItem("u", "user", rendered="hi"), RULER)
    cleared = _tool("c", text=IDLE_PLACEHOLDER, state=State.CLEARED, reason="idle")
    aged = _tool("t", text=STUB, state=State.AGED, changed_at=0.0)
    out = clear_idle(60.0, IDLE_PLACEHOLDER, ())(_commit(user, cleared, aged), FACTS)
    assert [i.state for i in out.items] == [State.FULL, State.CLEARED, State.CLEARED]
    assert list(out.marks.values()) == [3]


def test_the_factories_name_handles_by_default() -> None:
    """Called from Python without ``handles``, every rule's text names the recall handle."""
    old = _tool("t", turn=0)
    note = recall_note(item_handle(old))
    aged = age_tool_results(1, 200, 10, 10, ())(_commit(old), FACTS)
    assert aged.items[0].rendered.endswith(note)
    gated = gate_tool_results(1, 0.0, 1, 0, ())(_commit(old), FACTS)
    assert gated.items[0].rendered.endswith(note)
    idle = _tool("t", text=STUB, state=State.AGED, changed_at=0.0)
    assert (
        clear_idle(60.0, IDLE_PLACEHOLDER, ())(_commit(idle), FACTS)
        .items[0]
        .rendered.endswith(note)
    )
    capped = cap_tool_result(100, 0.5)(_commit(old), FACTS)
    assert "recall h:" in capped.items[0].rendered


def _cap(item: ContextItem, max_chars: int, max_args_chars: int = 0) -> ContextItem:
    return cap_tool_result(max_chars, 0.5, max_args_chars)(_commit(item), FACTS).items[0]


def test_a_result_of_exactly_the_limit_is_not_capped() -> None:
    """``max_chars`` is the longest result kept whole; one character more is capped."""
    assert _cap(_tool("t", text="y" * 300), 300).state is State.FULL
    capped = _cap(_tool("t", text="y" * 301), 300)
    assert (capped.state, capped.reason) == (State.AGED, "capped")


def test_a_limit_smaller_than_the_marker_keeps_only_the_marker() -> None:
    """When the marker alone is longer than the limit, no character of the text is kept."""
    capped = _cap(_tool("t", text="y" * 400), 10)
    assert capped.rendered == cap_marker(390, 400, "t")


def test_only_full_tool_results_are_capped() -> None:
    """A long message, an aged result and a locked result are never capped."""
    user = counted(ContextItem("u", "user", rendered="z" * 900), RULER)
    aged = _tool("a", state=State.AGED, reason="tail_window")
    locked = _tool("l", locked=True)
    out = cap_tool_result(100, 0.5)(_commit(user, aged, locked), FACTS)
    assert list(out.items) == [user, aged, locked]


def test_long_arguments_are_capped_at_their_own_limit() -> None:
    """Arguments over ``max_args_chars`` are cut with their own marker; the result is kept."""
    args = "a" * 500
    item = _tool("t", text="short result", arguments=args)
    capped = _cap(item, 300, max_args_chars=200)
    assert (capped.state, capped.rendered) == (State.AGED, "short result")
    marker = cap_marker(300, 500, "t")
    room = 200 - len(marker)
    assert capped.arguments == args[: room - room // 2] + marker + args[500 - room // 2 :]
    assert _cap(_tool("t", text="short", arguments="a" * 200), 300, 200).state is State.FULL
    # By default (max_args_chars 0) arguments are never capped.
    assert cap_tool_result(300, 0.5)(_commit(item), FACTS).items[0].arguments == args


def test_a_long_result_keeps_arguments_under_their_limit() -> None:
    """Capping a long result leaves arguments within ``max_args_chars`` whole, and the other way round."""
    item = _tool("t", text="r" * 1_000, arguments="a" * 190)
    capped = _cap(item, 300, max_args_chars=200)
    assert capped.arguments == "a" * 190
    assert len(capped.rendered) <= 300
    args_only = _cap(_tool("t", text="r" * 290, arguments="a" * 500), 300, max_args_chars=200)
    assert args_only.rendered == "r" * 290


def test_a_cap_reconfigured_to_tighter_arguments_rescans() -> None:
    """A cap rule whose argument limit changes has a new mark, so it examines old items again."""
    item = _tool("t", text="short", arguments="a" * 150)
    loose = cap_tool_result(300, 0.5, 200)(_commit(item), FACTS)
    assert loose.items[0].state is State.FULL
    tight = cap_tool_result(300, 0.5, 100)(loose, FACTS)
    assert tight.items[0].state is State.AGED


def test_aging_stubs_capped_results_but_not_aged_ones_again() -> None:
    """An old capped result is aged to its stub; one already aged to a stub is left as it is."""
    capped = _tool("c", turn=0, state=State.AGED, reason="capped")
    stubbed = _tool("s", text=STUB, turn=0, state=State.AGED, reason="tail_window")
    out = age_tool_results(1, 200, 10, 10, ())(_commit(capped, stubbed), FACTS)
    assert out.items[0].reason == "tail_window"
    assert out.items[0].rendered == tool_stub(capped, 10, 10)
    assert out.items[1] == stubbed


def test_aging_leaves_out_the_handle_when_handles_are_off() -> None:
    """With ``handles=False`` an aged result's stub has no recall note."""
    old = _tool("t", turn=0)
    out = age_tool_results(1, 200, 10, 10, (), handles=False)(_commit(old), FACTS)
    assert out.items[0].rendered == tool_stub(old, 10, 10, handles=False)
    assert "[recall" not in out.items[0].rendered
