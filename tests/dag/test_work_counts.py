"""Counted work: append and checkout touch a fixed number of map entries whatever the graph size."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from ctxrules.dag import Call, Graph, Session


class CountingMap:
    """Wraps a PMap and counts every read and write, sharing one tally across versions."""

    def __init__(self, inner: Any, tally: list[int]) -> None:
        self.inner = inner
        self.tally = tally

    def _touch(self) -> None:
        self.tally[0] += 1

    def __contains__(self, key: object) -> bool:
        self._touch()
        return key in self.inner

    def __getitem__(self, key: object) -> Any:
        self._touch()
        return self.inner[key]

    def get(self, key: object, default: Any = None) -> Any:
        self._touch()
        return self.inner.get(key, default)

    def set(self, key: object, value: Any) -> CountingMap:
        self._touch()
        return CountingMap(self.inner.set(key, value), self.tally)

    def __iter__(self) -> Iterator[Any]:
        # A full scan would show up as len(graph) touches, which is what the test forbids.
        for key in self.inner:
            self._touch()
            yield key

    def items(self) -> Iterator[Any]:
        for item in self.inner.items():
            self._touch()
            yield item

    def values(self) -> Iterator[Any]:
        for value in self.inner.values():
            self._touch()
            yield value

    def __len__(self) -> int:
        return len(self.inner)


def linear_graph(size: int) -> Graph:
    """A chain of ``size`` alternating user/assistant nodes, each with one tool callee."""
    graph = Graph()
    previous = None
    for i in range(size):
        node = Call(
            f"n{i}", "user" if i % 2 == 0 else "assistant", output=f"m{i}", predecessor=previous
        )
        graph = graph.append(node).unwrap()
        previous = node.id
    return graph


def counted(graph: Graph) -> tuple[Graph, list[int]]:
    """The same graph with its maps wrapped in counters sharing one tally."""
    tally = [0]
    return (
        attrs.evolve(
            graph,
            nodes=CountingMap(graph.nodes, tally),
            children=CountingMap(graph.children, tally),
            callees=CountingMap(graph.callees, tally),
        ),
        tally,
    )


def touches_for_append(size: int) -> int:
    """Map entries touched by one append (with reads) to a chain of ``size`` nodes."""
    graph, tally = counted(linear_graph(size))
    last = graph.order[-1]
    graph.append(Call("new", "assistant", predecessor=last, reads=(last, "n0"))).unwrap()
    return tally[0]


def touches_for_checkout(size: int) -> int:
    """Map entries touched by one checkout in a chain of ``size`` nodes."""
    graph, tally = counted(linear_graph(size))
    Session("s", graph, head=graph.order[-1]).checkout("n1").unwrap()
    return tally[0]


@pytest.mark.parametrize("operation", [touches_for_append, touches_for_checkout])
def test_work_per_operation_does_not_grow_with_graph_size(operation: Any) -> None:
    """Append and checkout touch the same small number of entries at 10 and 5,000 nodes."""
    small, large = operation(10), operation(5_000)
    assert small == large
    assert large <= 8


def test_counting_map_detects_a_full_scan() -> None:
    """The counter is able to fail: walking the whole node map counts one touch per node."""
    graph, tally = counted(linear_graph(50))
    _ = list(graph.nodes.values())
    assert tally[0] == 50


def test_an_append_makes_the_node_once_not_a_copy_with_its_seq_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A session builds each node with the seq the graph gives it, and the graph keeps it.

    The old append copied every field of the node again to set its seq: two objects a node.
    """
    copies: list[str] = []
    with_frozen = Call.with_frozen

    def counted(self: Call, **changes: object) -> Call:
        copies.append(self.id)
        return with_frozen(self, **changes)

    monkeypatch.setattr(Call, "with_frozen", counted)
    session = Session("s").send("user", "hi").unwrap()
    assert session.head is not None
    session = session.record_call(session.head, "ls", {"path": "."}, status="running").unwrap()
    session = session.send("assistant", "done").unwrap()
    assert copies == []
    nodes = [session.graph.nodes[node_id] for node_id in session.graph.order]
    assert [node.seq for node in nodes] == [0, 1, 2]
    # A call made elsewhere, without the seq, is still copied with it set.
    graph = session.graph.append(Call("x", "user", predecessor=session.head)).unwrap()
    assert graph.nodes["x"].seq == 3
    assert len(copies) == 1
