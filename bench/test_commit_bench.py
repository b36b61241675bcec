"""Commit benchmarks: generating one new turn and rendering, at 1k, 10k and 100k items."""

from __future__ import annotations

from typing import Any

import pytest

from ctxrules.commit import ContextCommit, ContextItem, generate_commit
from ctxrules.dag import Call, Graph
from ctxrules.render import counted, render_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.tokens import HeuristicCounter, load_encoding

SIZES = [1_000, 10_000, 100_000]
RULER = load_encoding("cl100k_base").unwrap()


def parent_commit(size: int) -> ContextCommit:
    """A commit of ``size`` items (user, assistant and tool) whose head is node ``p``."""
    heuristic = HeuristicCounter()
    items = []
    for i in range(size):
        if i % 3 == 2:
            item = ContextItem(
                f"n{i}",
                "tool",
                rendered=f"result {i} " * 8,
                tool_name="grep",
                tool_call_id=f"c{i}",
                arguments='{"q":"x"}',
            )
        else:
            item = ContextItem(
                f"n{i}",
                "user" if i % 3 == 0 else "assistant",
                rendered=f"message {i} about src/m{i}.py",
            )
        items.append(counted(item, heuristic))
    return ContextCommit("s", head_node_id="p").with_items(items)


def turn_graph() -> Graph:
    """The parent head and one new turn (user, assistant) after it."""
    graph = Graph().append(Call("p", "assistant", output="done")).unwrap()
    graph = graph.append(
        Call("u", "user", output="next question about src/app.py", predecessor="p")
    ).unwrap()
    return graph.append(Call("a", "assistant", output="the answer " * 20, predecessor="u")).unwrap()


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n // 1000}k")
def parent(request: pytest.FixtureRequest) -> ContextCommit:
    return parent_commit(request.param)


def test_generate_one_turn(benchmark: Any, parent: ContextCommit) -> None:
    graph = turn_graph()
    facts = Facts(tokenizer=RULER)
    child = benchmark(lambda: generate_commit(parent, graph, "a", Pipeline(), facts).unwrap())
    assert len(child.items) == len(parent.items) + 2


def test_render_commit(benchmark: Any, parent: ContextCommit) -> None:
    messages = benchmark(render_commit, parent)
    assert len(messages) >= len(parent.items)
