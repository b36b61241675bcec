"""Counted work: a new turn on a 10k-item parent counts and digests only the new items."""

from __future__ import annotations

from typing import Any

import pytest

import ctxrules.commit.commit as commit_module
from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Graph
from ctxrules.generation import generate_commit
from ctxrules.render import count_messages, render_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.tokens import CountingTokenizer, HeuristicCounter


def _chain(size: int) -> Graph:
    graph, previous = Graph(), None
    for i in range(size):
        role = "user" if i % 2 == 0 else "assistant"
        graph = graph.append(
            Call(f"n{i}", role, output=f"message {i} about src/mod_{i}.py", predecessor=previous)
        ).unwrap()
        previous = f"n{i}"
    return graph


@pytest.fixture(scope="module")
def big() -> tuple[Graph, ContextCommit]:
    """A 10k-node chain and its commit."""
    graph = _chain(10_000)
    facts = Facts(tokenizer=HeuristicCounter())
    return graph, generate_commit(None, graph, "n9999", Pipeline(), facts).unwrap()


def _one_turn(
    graph: Graph, parent: ContextCommit, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, int, int, ContextCommit]:
    grown = graph
    for i, role in ((10_000, "user"), (10_001, "assistant")):
        grown = grown.append(
            Call(f"n{i}", role, output=f"new {i}", predecessor=f"n{i - 1}")
        ).unwrap()
    ruler = CountingTokenizer(HeuristicCounter())
    terms = [0]
    original = commit_module.position_term

    def counting_term(index: int, item: Any) -> int:
        terms[0] += 1
        return original(index, item)

    monkeypatch.setattr(commit_module, "position_term", counting_term)
    child = generate_commit(parent, grown, "n10001", Pipeline(), Facts(tokenizer=ruler)).unwrap()
    monkeypatch.undo()
    return ruler.calls, terms[0], len(child.items), child


def test_new_turn_counts_only_new_items(
    big: tuple[Graph, ContextCommit], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two new nodes on a 10k-item parent: two tokenizer calls and two digest terms, not 10k."""
    graph, parent = big
    calls, terms, size, child = _one_turn(graph, parent, monkeypatch)
    assert size == 10_002
    assert calls == 2
    assert terms == 2
    assert child.total_tokens == count_messages(render_commit(child), HeuristicCounter())


def test_the_count_would_see_a_full_recount(big: tuple[Graph, ContextCommit]) -> None:
    """The counter is able to fail: recounting the whole commit costs one call per item."""
    _, parent = big
    ruler = CountingTokenizer(HeuristicCounter())
    count_messages(render_commit(parent), ruler)
    assert ruler.calls == 10_000
