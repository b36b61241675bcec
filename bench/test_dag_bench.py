"""DAG benchmarks: appending 100k nodes, walking a 10k-deep branch, forking a large session."""

from __future__ import annotations

from typing import Any

import pytest

from ctxrules.dag import Call, Graph, Session, branch


def chain(size: int) -> Graph:
    graph = Graph()
    previous = None
    for i in range(size):
        graph = graph.append(Call(f"n{i}", "user", output=f"m{i}", predecessor=previous)).unwrap()
        previous = f"n{i}"
    return graph


CALLS_100K = [
    Call(f"n{i}", "user", output=f"m{i}", predecessor=f"n{i - 1}" if i else None)
    for i in range(100_000)
]


def append_all(calls: list[Call]) -> Graph:
    graph = Graph()
    for call in calls:
        graph = graph.append(call).unwrap()
    return graph


def test_append_100k_nodes(benchmark: Any) -> None:
    graph = benchmark.pedantic(append_all, args=(CALLS_100K,), rounds=3, iterations=1)
    assert len(graph) == 100_000


@pytest.fixture(scope="module")
def deep() -> Graph:
    return chain(10_000)


def test_walk_10k_deep_branch(benchmark: Any, deep: Graph) -> None:
    calls = benchmark(branch, deep, "n9999")
    assert len(calls) == 10_000


def test_fork_of_10k_session(benchmark: Any, deep: Graph) -> None:
    session = Session("s", deep, head="n9999")
    forked = benchmark(session.fork, "n5000")
    assert forked.unwrap().graph is deep


@pytest.mark.parametrize("size", [1_000, 10_000])
def test_send_one_turn(benchmark: Any, size: int) -> None:
    session = Session("s", chain(size), head=f"n{size - 1}")
    result = benchmark(session.send, "user", "one more message")
    assert len(result.unwrap().graph) == size + 1
