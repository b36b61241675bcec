"""Behaviour of each built-in rule on small hand-built commits."""

from __future__ import annotations

import json

import attrs
from pyrsistent import pset

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.rules import IDLE_PLACEHOLDER, Facts, builtins, gate_placeholder
from ctxrules.rules.handles import handle_for, recall_note
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
RULES = builtins()


def tool(
    node: str, turn: int, text: str = "result line\n" * 10, name: str = "grep", **fields: object
) -> ContextItem:
    """A counted tool item in ``turn``."""
    item = ContextItem(
        node,
        "tool",
        rendered=text,
        tool_name=name,
        tool_call_id=f"call_{node}",
        arguments='{"q": "' + "x" * 300 + '"}',
        turn=turn,
    )
    return counted(attrs.evolve(item, **fields), RULER)


def said(node: str, turn: int, role: str = "assistant") -> ContextItem:
    """A counted text item in ``turn``."""
    return counted(ContextItem(node, role, rendered=f"message {node}", turn=turn), RULER)


def commit_of(*items: ContextItem) -> ContextCommit:
    """A commit holding these items."""
    return ContextCommit("s").with_items(items)


def run(
    name: str, commit: ContextCommit, params: dict[str, object] | None = None, **facts: object
) -> ContextCommit:
    """Run the built-in ``name`` with ``params`` on ``commit``."""
    return RULES[name].build(params or {}).unwrap()(commit, Facts(tokenizer=RULER, **facts))


def states(commit: ContextCommit) -> list[str]:
    """The state of each item."""
    return [i.state.value for i in commit.items]


def test_age_tool_results_tail_window_boundary() -> None:
    """With head turn 5 and tail 3, results of turns 0 and 1 age; turn 2 is the oldest kept whole."""
    commit = commit_of(tool("t0", 0), tool("t1", 1), tool("t2", 2), tool("t4", 4))
    after = run("age_tool_results", commit, head_turn=5)
    assert states(after) == ["aged", "aged", "full", "full"]
    aged = after.items[0]
    assert aged.rendered == "[tool grep] output: " + " ".join(["result line"] * 10) + (
        f" [recall {handle_for('t0')}]"
    )
    assert "\n" not in aged.rendered
    # Arguments that are a JSON object stay one, cut inside the long field.
    assert json.loads(aged.arguments)["q"].startswith("x" * 100)
    assert aged.arguments.endswith('…"}')
    assert len(aged.arguments) <= 200
    assert (aged.reason, aged.tokens < commit.items[0].tokens) == ("tail_window", True)


def test_age_tool_results_stub_keeps_head_and_tail() -> None:
    """The stub is one line: the head of the result, an ellipsis and its tail."""
    text = "START " + "middle " * 100 + " END"
    after = run(
        "age_tool_results",
        commit_of(tool("t0", 0, text)),
        {"stub_head_chars": 5, "stub_tail_chars": 3},
        head_turn=9,
    )
    assert after.items[0].rendered == f"[tool grep] output: START… END [recall {handle_for('t0')}]"


def test_protected_tools_are_never_aged() -> None:
    """A todo_list result outside the tail window stays whole; a custom protected list is honoured."""
    commit = commit_of(tool("t0", 0, name="todo_list"), tool("t1", 0, name="grep"))
    assert states(run("age_tool_results", commit, head_turn=9)) == ["full", "aged"]
    assert states(run("age_tool_results", commit, {"protected_tools": ["grep"]}, head_turn=9)) == [
        "aged",
        "full",
    ]


def test_cap_tool_result_keeps_head_and_tail_even_in_the_tail_window() -> None:
    """A 10,000-character result in the current turn is cut to 4000 characters, head and tail kept."""
    text = "H" * 5000 + "T" * 5000
    after = run("cap_tool_result", commit_of(tool("t0", 3, text)), head_turn=3)
    item = after.items[0]
    assert (item.state, item.reason) == (State.AGED, "capped")
    assert len(item.rendered) <= 4000
    assert item.rendered.startswith("H" * 2000)
    assert item.rendered.endswith("T" * 1000)
    assert f"[6000 of 10000 characters cut; recall {handle_for('t0')}]" in item.rendered
    small = run("cap_tool_result", commit_of(tool("t1", 3, "short")))
    assert states(small) == ["full"]


def test_capped_results_are_later_stubbed_by_aging() -> None:
    """A capped result leaves the tail window as a one-line stub like any other."""
    capped = run("cap_tool_result", commit_of(tool("t0", 0, "x" * 9000)))
    aged = run("age_tool_results", capped, head_turn=9)
    assert aged.items[0].reason == "tail_window"
    assert aged.items[0].rendered.startswith("[tool grep] output: xxx")


def test_clear_idle_waits_sixty_minutes_and_uses_one_fixed_placeholder() -> None:
    """An aged result clears after 3600 s, to a placeholder plus its handle, byte-identical every time."""
    aged = run(
        "age_tool_results",
        commit_of(tool("t0", 0), tool("t1", 0, "other text " * 30)),
        head_turn=9,
        now=1000.0,
    )
    assert states(run("clear_idle", aged, now=1000.0 + 3599)) == ["aged", "aged"]
    cleared = run("clear_idle", aged, now=1000.0 + 3600)
    assert states(cleared) == ["cleared", "cleared"]
    texts = [i.rendered.encode() for i in cleared.items]
    assert texts == [
        f"{IDLE_PLACEHOLDER} {recall_note(handle_for(t))}".encode() for t in ("t0", "t1")
    ]
    again = run(
        "clear_idle",
        run("age_tool_results", commit_of(tool("t0", 0, "different")), head_turn=9),
        now=1e9,
    )
    assert again.items[0].rendered.encode() == texts[0]


def test_clear_idle_leaves_full_and_protected_results() -> None:
    """Only aged, unprotected results are cleared."""
    commit = commit_of(tool("t0", 0), tool("t1", 0, name="web_search", state="aged"))
    assert states(run("clear_idle", commit, now=1e9)) == ["full", "aged"]


BIG = "word " * 4000  # well over 800 tokens


def _gate(commit: ContextCommit, **facts: object) -> list[str]:
    return states(run("gate_tool_results", commit, **facts))


def test_gate_clears_when_all_three_gates_pass() -> None:
    """Four turns old, a minute old, uncited and over 800 tokens: cleared with the token count."""
    commit = commit_of(said("u", 0, "user"), said("a", 0), tool("t", 0, BIG, created_at=0.0))
    after = run("gate_tool_results", commit, head_turn=4, now=60.0)
    assert states(after) == ["full", "full", "cleared"]
    expected = f"{gate_placeholder(commit.items[2].tokens)} {recall_note(handle_for('t'))}"
    assert after.items[2].rendered == expected


def test_gate_turn_distance_alone_blocks() -> None:
    """Three turns old is not enough."""
    commit = commit_of(said("u", 0, "user"), said("a", 0), tool("t", 0, BIG))
    assert _gate(commit, head_turn=3, now=1e6) == ["full", "full", "full"]


def test_gate_wall_clock_alone_blocks() -> None:
    """A result made 59 seconds ago is kept, however many turns passed."""
    commit = commit_of(said("u", 0, "user"), said("a", 0), tool("t", 0, BIG, created_at=100.0))
    assert _gate(commit, head_turn=40, now=159.0) == ["full", "full", "full"]


def test_gate_citation_alone_blocks() -> None:
    """A result a later message cites is kept."""
    commit = commit_of(said("u", 0, "user"), said("a", 0), tool("t", 0, BIG))
    assert _gate(commit, head_turn=40, now=1e6, cited=pset(["t"])) == ["full", "full", "full"]


def test_gate_800_token_floor() -> None:
    """A result under 800 tokens is not worth clearing; one at the floor is cleared."""
    small = tool("t", 0, "word " * 100)
    assert small.tokens < 800
    commit = commit_of(said("u", 0, "user"), said("a", 0), small)
    assert _gate(commit, head_turn=40, now=1e6) == ["full", "full", "full"]
    assert _gate(commit, head_turn=40, now=1e6) == _gate(commit, head_turn=40, now=1e6)
    at_floor = run("gate_tool_results", commit, {"min_tokens": small.tokens}, head_turn=40, now=1e6)
    assert states(at_floor) == ["full", "full", "cleared"]


def test_gate_protects_the_first_n_items() -> None:
    """Results among the first protect_first_n items are kept."""
    commit = commit_of(tool("t0", 0, BIG), tool("t1", 0, BIG), tool("t2", 0, BIG))
    assert _gate(commit, head_turn=40, now=1e6) == ["full", "full", "cleared"]
    assert (
        states(run("gate_tool_results", commit, {"protect_first_n": 0}, head_turn=40, now=1e6))
        == ["cleared"] * 3
    )


def test_locked_items_are_untouched_by_every_builtin() -> None:
    """No built-in changes a locked item, whatever its age."""
    locked = tool("t0", 0, BIG, locked=True, state="aged")
    commit = commit_of(said("u", 0, "user"), said("a", 0), locked)
    for name in RULES:
        after = run(name, commit, head_turn=99, now=1e9)
        assert after.items[2] == locked, name


def test_clear_idle_passes_over_full_results_without_an_aging_rule() -> None:
    """A small full result does not keep later idle aged results from clearing."""
    commit = commit_of(tool("t0", 0, "tiny"), tool("t1", 0, state="aged", changed_at=0.0))
    after = run("clear_idle", commit, now=1e6)
    assert states(after) == ["full", "cleared"]
    # The mark stays at the full result, which an aging rule may still change.
    assert set(after.marks.values()) == {0}


def test_non_finite_parameters_are_refused() -> None:
    """NaN and infinity are not valid numbers for a bounded parameter."""
    problems = RULES["clear_idle"].build({"idle_seconds": float("nan")}).failure()
    assert [p.message for p in problems] == [
        "idle_seconds: expected a finite number: a number >= 0, found nan"
    ]


def test_age_tool_results_keeps_a_cited_result_whole_for_cited_tail_turns() -> None:
    """A cited result outlives the tail window up to cited_tail_turns, then ages like the rest."""
    commit = commit_of(tool("t0", 0), tool("t1", 1), tool("t4", 4))
    params = {"cited_tail_turns": 8}
    after = run("age_tool_results", commit, params, head_turn=5, cited=frozenset({"t0"}))
    assert states(after) == ["full", "aged", "full"]
    later = run("age_tool_results", after, params, head_turn=9, cited=frozenset({"t0"}))
    assert states(later) == ["aged", "aged", "aged"]
    assert states(run("age_tool_results", commit, head_turn=5, cited=frozenset({"t0"}))) == [
        "aged",
        "aged",
        "full",
    ]
