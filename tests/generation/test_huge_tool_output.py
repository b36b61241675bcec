"""Work counted: a huge tool output costs a turn what is sent, not its size (issue 28)."""

from __future__ import annotations

import tomllib

import pytest

import ctxrules
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.generation import generate_commit
from ctxrules.recall import handle_for
from ctxrules.render import counted
from ctxrules.rules import Facts, NamedRule, Pipeline, ReferenceTracker, builtins
from ctxrules.rules.references import READ_CHARS, item_text
from ctxrules.spec.builtin import BUILTIN_DIR
from ctxrules.tokens import CountingTokenizer, HeuristicCounter

LINE = "2024-05-01 12:00:00 INFO worker-17 served /api/v1/items/4821 in 12ms\n"
#: The built-in rule's cap, and the default spec's: what a capped result is sent as.
CAP = 4000
SPEC_CAP = next(
    rule["params"]["max_chars"]
    for rule in tomllib.loads((BUILTIN_DIR / "default.toml").read_text())["rules"]
    if rule["use"] == "cap_tool_result"
)


def _output(chars: int) -> str:
    return (LINE * (chars // len(LINE) + 1))[:chars]


def _counted_after_output(chars: int) -> tuple[int, ctxrules.Context]:
    """Characters tokenized by the ``openai()`` that follows a tool output of ``chars`` characters."""
    ruler = CountingTokenizer(HeuristicCounter())
    ctx = ctxrules.Context("default", model="gpt-4o", tokenizer=ruler, clock=lambda: 100.0)
    ctx.add(
        {"role": "user", "content": "read the log"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "cat", "arguments": "{}"}}
            ],
        },
    )
    ctx.add_tool_result("c1", _output(chars))
    before = ruler.chars
    ctx.openai()
    return ruler.chars - before, ctx


@pytest.mark.parametrize("chars", [500_000, 5_000_000])
def test_a_huge_output_is_tokenized_only_as_far_as_it_is_sent(chars: int) -> None:
    """The turn after a 0.5 or 5 MB output tokenizes a few cap's worth of characters, not the output."""
    tokenized, ctx = _counted_after_output(chars)
    assert tokenized <= 3 * SPEC_CAP
    sent = ctx.openai()["messages"]
    assert isinstance(sent, list)
    assert len(sent[-1]["content"]) == SPEC_CAP
    # The original stays whole in the DAG, where recall finds it.
    tool = ctx.session.graph.callees_of(ctx.session.head or "")[0]
    assert ctx.session.graph.nodes[tool].output == _output(chars)
    assert handle_for(tool) in sent[-1]["content"]


def test_the_tokenized_work_does_not_grow_with_the_output() -> None:
    """Ten times the output, the same characters tokenized."""
    assert _counted_after_output(500_000)[0] == _counted_after_output(5_000_000)[0]


def test_the_reference_tracker_reads_a_bounded_part_of_an_item() -> None:
    """The tracker reads both ends of a 5 MB result (READ_CHARS each), and nothing of its middle."""
    middle = "see src/only/in_the_middle.py\n"
    plain = _output(5_000_000)
    marked = plain[:2_500_000] + middle + plain[2_500_000 + len(middle) :]
    mention = ContextItem("a", "assistant", rendered="open src/only/in_the_middle.py")
    for text in (plain, marked):
        item = ContextItem("t", "tool", rendered=text, tool_name="cat", arguments="{}")
        assert len(item_text(item)) <= 2 * READ_CHARS + 4
        assert "t" not in ReferenceTracker().observe([item, mention]).cited
    # Both ends are still read: a path near the end is cited as before.
    ended = ContextItem("t", "tool", rendered=plain + middle, tool_name="cat", arguments="{}")
    assert "t" in ReferenceTracker().observe([ended, mention]).cited


@pytest.mark.parametrize("size", [100, CAP, CAP + 1, 3 * CAP, 40_000])
def test_the_cap_on_arrival_is_the_cap_rule(size: int) -> None:
    """Capping a new item on arrival gives the item the cap rule gives, counted the same."""
    cap = builtins()["cap_tool_result"].build({"max_args_chars": 300}).unwrap()
    pipeline = Pipeline((NamedRule("cap_tool_result", cap),))
    ruler = HeuristicCounter()
    facts = Facts(now=42.0, tokenizer=ruler)
    item = ContextItem(
        "t", "tool", rendered=_output(size), tool_name="cat", arguments="{" + "x" * size + "}"
    )
    by_rule = pipeline.run(ContextCommit("s").append_items([counted(item, ruler)]), facts).items[0]
    arrived = counted(pipeline.on_arrival(item, facts), ruler)
    assert (arrived.state, arrived.rendered, arrived.arguments, arrived.reason) == (
        by_rule.state,
        by_rule.rendered,
        by_rule.arguments,
        by_rule.reason,
    )
    assert (arrived.tokens, arrived.changed_at) == (by_rule.tokens, by_rule.changed_at)
    assert (arrived.state is State.AGED) == (size > CAP or size + 2 > 300)


def test_a_cap_after_another_rule_waits_its_turn() -> None:
    """Only a first rule caps on arrival: a cap after another rule runs on what that rule left."""
    cap = builtins()["cap_tool_result"].build().unwrap()
    idle = builtins()["clear_idle"].build().unwrap()
    item = ContextItem("t", "tool", rendered=_output(10_000), tool_name="cat")
    late = Pipeline((NamedRule("clear_idle", idle), NamedRule("cap_tool_result", cap)))
    assert late.on_arrival(item, Facts()) is item
    assert late.result_chars == CAP


def test_generation_keeps_the_original_in_the_graph() -> None:
    """A generated commit holds the capped item; the graph node keeps the whole output."""
    from ctxrules.dag import Call, Graph  # noqa: PLC0415 - only this test builds a graph

    big = _output(200_000)
    graph = Graph().append(Call("t1", "tool", name="cat", output=big)).unwrap()
    cap = builtins()["cap_tool_result"].build().unwrap()
    pipeline = Pipeline((NamedRule("cap_tool_result", cap),))
    ruler = CountingTokenizer(HeuristicCounter())
    commit = generate_commit(None, graph, "t1", pipeline, Facts(tokenizer=ruler)).unwrap()
    assert len(commit.items[0].rendered) == CAP
    assert ruler.chars < 2 * CAP
    assert graph.nodes["t1"].output == big


def test_the_engine_tracker_reads_a_capped_result_as_it_is_sent() -> None:
    """The tracker cites what is sent: a path in the kept head, or one named for the cut middle."""
    filler = _output(20_000)
    cited = []
    for path, at in (("src/only/in_the_middle.py", 10_000), ("src/kept/in_the_head.py", 100)):
        ctx = ctxrules.Context("default", model="gpt-4o", tokenizer=HeuristicCounter())
        call = {"id": "c1", "type": "function", "function": {"name": "cat", "arguments": "{}"}}
        ctx.add(
            {"role": "user", "content": "read the log"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
        )
        ctx.add_tool_result("c1", filler[:at] + f" {path} " + filler[at:])
        ctx.add({"role": "user", "content": f"now open {path}"})
        ctx.openai()
        tool = ctx.session.graph.callees_of(ctx.session.graph.order[1])[0]
        sent = ctx.last.commit.items[2].rendered if ctx.last is not None else ""
        cited.append((tool in ctx.engine.states["main"].references.cited, path in sent))
    # Cited exactly when the request shows the path: in the kept head, or among the names
    # the default spec's cap lists for the cut middle (its lookup hints).
    assert [was_cited for was_cited, _ in cited] == [shown for _, shown in cited]
    assert cited[1] == (True, True)
