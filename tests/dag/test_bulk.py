"""`graph_from_records`: the graph a store reads back equals the one `Graph.append` built."""

from __future__ import annotations

from hypothesis import given
from returns.result import Failure

from ctxrules.dag import ConflictingEdges, Graph, Session, call_to_json
from ctxrules.dag.bulk import graph_from_records
from ctxrules.dag.jsonl import graph_from_jsonl, graph_to_jsonl
from ctxrules.testing.dag import sessions


def _rows(graph: Graph) -> list[tuple[str, int, object]]:
    return [(i, graph.nodes[i].seq, call_to_json(graph.nodes[i])) for i in graph.order]


@given(sessions())
def test_the_bulk_graph_equals_the_appended_one(session: Session) -> None:
    """Invariant 1 (the history is append-only and exact): what is read back is what was built."""
    built = graph_from_records(_rows(session.graph)).unwrap()
    assert built == session.graph
    assert built == graph_from_jsonl(graph_to_jsonl(session.graph)).unwrap()


def _refusal(rows: list[tuple[str, int, object]]) -> tuple[str, str]:
    result = graph_from_records(rows)
    assert isinstance(result, Failure)
    node_id, reason = result.failure()
    return node_id, reason


def test_each_bad_row_is_refused_with_the_reason_append_gives() -> None:
    """Every check of `Graph.append` and `call_from_json` holds on the bulk path."""
    user = {"id": "u", "role": "user", "output": "hi"}
    assert _refusal([("u", 1, user)]) == ("u", "seq 1, expected 0")
    assert _refusal([("u", 0, user), ("u", 1, user)]) == (
        "u",
        "duplicate node id 'u': the graph is append-only",
    )
    orphan = {"id": "a", "role": "assistant", "predecessor": "x"}
    assert _refusal([("a", 0, orphan)]) == ("a", "unknown node 'x' given as predecessor")
    both = {"id": "a", "role": "tool", "predecessor": "u", "caller": "u"}
    assert _refusal([("u", 0, user), ("a", 1, both)]) == (
        "a",
        ConflictingEdges("a", "u", "u").message,
    )
    reads = {"id": "a", "role": "tool", "reads": ["gone"]}
    assert _refusal([("a", 0, reads)]) == ("a", "node 'a' reads unknown nodes ['gone']")
    assert _refusal([("a", 0, {"id": "a", "role": "robot"})])[1].startswith(
        "line 1: role: expected"
    )
    assert _refusal([("a", 0, ["not", "an", "object"])])[1].startswith(
        "line 1: expected a JSON object"
    )
    nan = {"id": "a", "role": "user", "output": float("nan")}
    assert "nan" in _refusal([("a", 0, nan)])[1]


def test_a_record_the_fast_path_passes_over_is_read_in_full() -> None:
    """An integer ``created_at`` or missing optional fields read as `call_from_json` reads them."""
    rows: list[tuple[str, int, object]] = [("u", 0, {"id": "u", "role": "user", "created_at": 3})]
    graph = graph_from_records(rows).unwrap()
    assert graph.nodes["u"].created_at == 3.0
    assert graph.nodes["u"].seq == 0
