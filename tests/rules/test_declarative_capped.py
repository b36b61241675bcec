"""A declarative rule that ages tool results also stubs the ones the cap cut on arrival (issue 28)."""

from __future__ import annotations

import pytest

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.rules import Facts
from ctxrules.rules.handles import handle_for
from ctxrules.spec import load_spec
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
SPEC = """
[[rules]]
use = "cap_tool_result"

[[rules]]
name = "stub-old"
when = {{ role = "tool", turn_age = {{ ge = 1 }} }}
then = {{ state = "{state}"{text} }}

[[rules]]
use = "age_tool_results"
[rules.params]
tail_turns = 5
"""
STUB = ', text = "[{name} output hidden] [recall {handle}]"'


def _turns(*sizes: int) -> list[ContextItem]:
    """One tool result per turn, of the given sizes."""
    return [
        counted(
            ContextItem(
                f"t{turn}",
                "tool",
                rendered="word " * (size // 5),
                tool_name="cat",
                tool_call_id=f"c{turn}",
                arguments="{}",
                turn=turn,
            ),
            RULER,
        )
        for turn, size in enumerate(sizes)
    ]


def _run(state: str, text: str, items: list[ContextItem]) -> ContextCommit:
    """The spec's pipeline run turn by turn, one new result each turn."""
    pipeline = load_spec(SPEC.format(state=state, text=text)).unwrap()
    commit = ContextCommit("s")
    for turn, item in enumerate(items):
        commit = pipeline.run(
            commit.append_items([item]), Facts(now=float(turn), head_turn=turn + 1, tokenizer=RULER)
        )
    return commit


def test_a_stub_rule_stubs_capped_results_too() -> None:
    """An old result over the cap gets the rule's stub, like one under it (it used to keep its capped text)."""
    commit = _run("aged", STUB, _turns(500, 20_000, 300))
    small, big, newest = commit.items
    assert small.rendered == f"[cat output hidden] [recall {handle_for('t0')}]"
    assert big.rendered == f"[cat output hidden] [recall {handle_for('t1')}]"
    assert (big.state, big.reason) == (State.AGED, "stub-old")
    assert newest.state is State.FULL


def test_a_rule_without_text_leaves_a_capped_result_to_the_builtin_aging() -> None:
    """Moving a capped result to ``aged`` with no text changes nothing: it stays ``capped``, so aging still stubs it."""
    commit = _run("aged", "", _turns(20_000, 300))
    assert (commit.items[0].state, commit.items[0].reason) == (State.AGED, "capped")
    assert len(commit.items[0].rendered) == 4000
    later = _run("aged", "", _turns(20_000, *[300] * 6))
    assert later.items[0].reason == "tail_window"
    assert later.items[0].rendered.startswith("[tool cat] output: word")


@pytest.mark.parametrize("text", ["", STUB])
def test_a_clearing_rule_clears_capped_results(text: str) -> None:
    """``cleared`` is tighter than a cap's ``aged``: capped results are cleared as before."""
    commit = _run("cleared", text, _turns(20_000, 300))
    assert commit.items[0].state is State.CLEARED
