"""DAG benchmarks: one append onto 1k/10k/100k nodes, whole builds, a deep walk, a fork."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import pytest

from ctxrules.dag import Call, Graph, Session, branch

#: Rounds for whole builds; 100k appends take seconds while the cyclic GC runs.
BUILD_ROUNDS = {1_000: 5, 10_000: 3, 100_000: 1}


def calls(size: int) -> list[Call]:
    """A linear conversation of ``size`` user nodes."""
    return [
        Call(f"n{i}", "user", output=f"m{i}", predecessor=f"n{i - 1}" if i else None)
        for i in range(size)
    ]


def append_all(nodes: list[Call]) -> Graph:
    graph = Graph()
    for call in nodes:
        graph = graph.append(call).unwrap()
    return graph


@pytest.fixture(scope="module")
def chains() -> Callable[[int], Graph]:
    """A getter of linear graphs by size, each built once (GC paused: setup is not timed)."""
    built: dict[int, Graph] = {}

    def get(size: int) -> Graph:
        if size not in built:
            gc.disable()
            try:
                built[size] = append_all(calls(size))
            finally:
                gc.enable()
        return built[size]

    return get


def test_append_one_node(benchmark: Any, chains: Callable[[int], Graph], size: int) -> None:
    """One node appended to a graph of ``size`` nodes: the DAG's per-turn cost."""
    graph = chains(size)
    call = Call("new", "user", output="one more", predecessor=f"n{size - 1}")
    benchmark.extra_info.update(kind="dag_append", size=size)
    grown = benchmark(lambda: graph.append(call).unwrap())
    assert len(grown) == size + 1


def test_build_graph(benchmark: Any, size: int) -> None:
    """A whole graph of ``size`` nodes appended one by one, the cyclic GC running as usual."""
    nodes = calls(size)
    benchmark.extra_info.update(kind="dag_build", size=size)
    graph = benchmark.pedantic(append_all, args=(nodes,), rounds=BUILD_ROUNDS[size], iterations=1)
    assert len(graph) == size


@pytest.mark.parametrize("size", [1_000, 10_000], ids=["1k", "10k"])
def test_send_one_turn(benchmark: Any, chains: Callable[[int], Graph], size: int) -> None:
    """`Session.send` on a session of ``size`` nodes."""
    session = Session("s", chains(size), head=f"n{size - 1}")
    benchmark.extra_info.update(kind="session_send", size=size)
    result = benchmark(session.send, "user", "one more message")
    assert len(result.unwrap().graph) == size + 1


def test_walk_10k_deep_branch(benchmark: Any, chains: Callable[[int], Graph]) -> None:
    """The whole branch of a 10k-deep head, oldest first."""
    benchmark.extra_info.update(kind="branch_walk", size=10_000)
    found = benchmark(branch, chains(10_000), "n9999")
    assert len(found) == 10_000


def test_fork_of_10k_session(benchmark: Any, chains: Callable[[int], Graph]) -> None:
    """A fork of a 10k-node session shares its graph."""
    deep = chains(10_000)
    session = Session("s", deep, head="n9999")
    benchmark.extra_info.update(kind="fork", size=10_000)
    forked = benchmark(session.fork, "n5000")
    assert forked.unwrap().graph is deep
