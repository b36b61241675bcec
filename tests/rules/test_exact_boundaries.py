"""Exact boundaries of the built-in rules: the arithmetic mutation testing found untested.

Each test pins one number or one branch that a plausible slip (``-`` for ``+``, ``index``
for ``index + 1``, head for tail) would change: the turn-distance gate, the rules'
bookmarks, head and tail cutting, and each branch of `tighten` (invariant 3).
"""

from __future__ import annotations

import attrs

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.rules import Facts
from ctxrules.rules.gates import gate_tool_results
from ctxrules.rules.text import head, head_and_tail, tail
from ctxrules.rules.tighten import tighten
from ctxrules.rules.tool_aging import age_tool_results, cap_tool_result, tool_stub
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _tool(node: str, turn: int, text: str = "x " * 600, **fields: object) -> ContextItem:
    item = ContextItem(node, "tool", rendered=text, tool_name="grep", tool_call_id="c_" + node,
                       turn=turn, **fields)  # type: ignore[arg-type]  # fmt: skip
    return counted(item, RULER)


def _commit(*items: ContextItem) -> ContextCommit:
    return ContextCommit("s").with_items(items)


def _gate(min_turns: int = 4) -> object:
    return gate_tool_results(min_turns, 0.0, 1, 0, ())


def test_the_turn_gate_counts_turns_back_from_the_head() -> None:
    """Invariant 3: a result exactly ``min_turns`` old is cleared, one turn younger is not."""
    commit = _commit(_tool("t5", 5), _tool("t6", 6))
    out = _gate()(commit, Facts(now=100.0, head_turn=9, tokenizer=RULER))  # type: ignore[operator]
    assert [i.state for i in out.items] == [State.CLEARED, State.FULL]
    # head_turn + turn would clear both; the difference must be taken the right way round.
    early = _gate()(commit, Facts(now=100.0, head_turn=5, tokenizer=RULER))  # type: ignore[operator]
    assert [i.state for i in early.items] == [State.FULL, State.FULL]


def test_the_gate_bookmark_is_one_past_the_last_item_passed() -> None:
    """The gate's mark is the position after the last item it has decided on, no more."""
    commit = _commit(_tool("t0", 0), _tool("t1", 1), _tool("t8", 8))
    out = _gate()(commit, Facts(now=100.0, head_turn=6, tokenizer=RULER))  # type: ignore[operator]
    assert list(out.marks.values()) == [2]
    later = _gate()(out, Facts(now=100.0, head_turn=12, tokenizer=RULER))  # type: ignore[operator]
    assert [i.state for i in later.items] == [State.CLEARED] * 3
    assert list(later.marks.values()) == [3]


def test_the_gate_waits_for_a_young_result_and_marks_before_it() -> None:
    """A result too young in seconds stops the scan there; the mark stays on it."""
    gate = gate_tool_results(0, 60.0, 1, 0, ())
    commit = _commit(_tool("old", 0, created_at=0.0), _tool("new", 0, created_at=90.0))
    out = gate(commit, Facts(now=100.0, head_turn=3, tokenizer=RULER))
    assert [i.state for i in out.items] == [State.CLEARED, State.FULL]
    assert list(out.marks.values()) == [1]


def test_aging_marks_one_past_the_last_old_item() -> None:
    """Tool aging's mark is the first position inside the tail window."""
    age = age_tool_results(2, 200, 10, 5, ())
    commit = _commit(_tool("t0", 0), _tool("t1", 1), _tool("t3", 3))
    out = age(commit, Facts(head_turn=3, tokenizer=RULER))
    assert [i.state for i in out.items] == [State.AGED, State.FULL, State.FULL]
    assert list(out.marks.values()) == [1]


def test_the_stub_keeps_head_then_tail() -> None:
    """The stub shows the first and the last characters, in that order."""
    item = ContextItem("n", "tool", rendered="0123456789abcdef", tool_name="cat")
    assert tool_stub(item, 4, 3, handles=False) == "[tool cat] output: 0123… def"
    assert tool_stub(item, 10, 6, handles=False) == "[tool cat] output: 0123456789abcdef"
    assert tool_stub(attrs.evolve(item, tool_name=None), 2, 1, handles=False) == (
        "[tool unknown] output: 01… f"
    )
    assert tool_stub(item, 4, 3).startswith("[tool cat] output: 0123… def [recall h:")


def test_text_cutting_boundaries() -> None:
    """Head, tail and head-and-tail at, below and past their limits."""
    assert head("abcd", 4) == "abcd"
    assert head("abcde", 4) == "abcd…"
    assert head("abc", 0) == "…"
    assert tail("abcd", 4) == "abcd"
    assert tail("abcde", 4) == "…bcde"
    assert tail("abc", 0) == "…"
    assert head_and_tail("abcdefgh", 3, 5) == "abcdefgh"
    assert head_and_tail("abcdefghi", 3, 5, "|") == "abc|efghi"
    assert head_and_tail("abcdefghi", 3, 0, "|") == "abc|"


def test_the_cap_keeps_a_head_and_a_tail_share() -> None:
    """A capped result keeps ``tail_share`` of the room at the end and the rest at the start."""
    text = "".join(chr(ord("a") + k % 26) for k in range(5_000))
    capped = cap_tool_result(1_000, 0.25, handles=False)(
        _commit(_tool("t", 0, text)), Facts(tokenizer=RULER)
    )
    kept = capped.items[0].rendered
    marker = "\n…[4000 characters cut]…\n"
    room = 1_000 - len(marker)
    assert kept == text[: room - room // 4] + marker + text[-(room // 4) :]
    assert (capped.items[0].state, capped.items[0].reason) == (State.AGED, "capped")
    assert list(capped.marks.values()) == [1]
    short = _commit(_tool("s", 0, "short"))
    assert cap_tool_result(1_000, 0.25)(short, Facts(tokenizer=RULER)).items == short.items


def test_tighten_refuses_locked_and_looser() -> None:
    """Invariants 3 and 4: locked items and loosening moves give None."""
    facts = Facts(now=7.0, tokenizer=RULER)
    item = _tool("t", 0)
    assert tighten(attrs.evolve(item, locked=True), State.AGED, facts, reason="r") is None
    aged = tighten(item, State.AGED, facts, rendered="stub", reason="r")
    assert aged is not None
    assert tighten(aged, State.FULL, facts, reason="r") is None


def test_tighten_keeps_the_old_text_when_the_new_one_is_longer() -> None:
    """Invariant 3: tokens never grow; the state moves, text, arguments and tokens stay."""
    facts = Facts(now=7.0, tokenizer=RULER)
    item = _tool("t", 0, "short", arguments="{}")
    out = tighten(item, State.AGED, facts, rendered="much " * 50, arguments="{...}", reason="r")
    assert out is not None
    assert (out.state, out.rendered, out.arguments, out.tokens) == (
        State.AGED, "short", "{}", item.tokens)  # fmt: skip
    assert (out.reason, out.changed_at) == ("r", 7.0)


def test_tighten_to_the_same_state_keeps_the_change_time() -> None:
    """``changed_at`` moves only when the state does; text given as None keeps the old text."""
    facts = Facts(now=7.0, tokenizer=RULER)
    item = attrs.evolve(_tool("t", 0), state=State.AGED, changed_at=3.0)
    out = tighten(item, State.AGED, facts, reason="again")
    assert out is not None
    assert (out.changed_at, out.rendered, out.arguments) == (3.0, item.rendered, item.arguments)
    cleared = tighten(item, State.CLEARED, facts, rendered="", reason="gone")
    assert cleared is not None
    assert (cleared.changed_at, cleared.tokens < item.tokens) == (7.0, True)


def test_tighten_takes_new_text_of_equal_cost() -> None:
    """Invariant 3 allows equal tokens: new text that costs the same is taken."""
    facts = Facts(now=7.0, tokenizer=RULER)
    item = _tool("t", 0, "abcd efgh")
    out = tighten(item, State.AGED, facts, rendered="hgfe dcba", reason="r")
    assert out is not None
    assert (out.rendered, out.tokens) == ("hgfe dcba", item.tokens)
