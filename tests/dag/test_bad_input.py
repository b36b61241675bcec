"""Every bad input to the DAG is a Failure with a typed error and pinned text, and changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from returns.result import Failure

from ctxrules.dag import (
    Call,
    ConflictingEdges,
    DuplicateNode,
    Graph,
    InvalidPayload,
    InvalidValue,
    MalformedRecord,
    NotRunning,
    Session,
    SessionBusy,
    UnknownNode,
    UnknownReads,
    graph_from_jsonl,
    graph_to_jsonl,
)


def _base() -> Session:
    return (
        Session("s_bad")
        .send("user", "hi")
        .bind(lambda s: s.send("assistant", "hello"))
        .bind(lambda s: s.record_call(s.head, "ls", {"path": "."}, status="running"))
        .unwrap()
    )


BASE = _base()
U, A = BASE.graph.order[0], BASE.graph.order[1]
T = BASE.graph.order[2]
DONE = Session("s_done").send("user", "hi").unwrap()
D = DONE.head
GOOD_LINE = graph_to_jsonl(DONE.graph).strip()

CASES: list[tuple[str, Callable[[], Any], type, str]] = [
    (
        "duplicate id",
        lambda: BASE.graph.append(Call(U, "user")),
        DuplicateNode,
        f"duplicate node id {U!r}: the graph is append-only",
    ),
    (
        "unknown predecessor",
        lambda: BASE.graph.append(Call("x", "user", predecessor="ghost")),
        UnknownNode,
        "unknown node 'ghost' given as predecessor",
    ),
    (
        "unknown caller",
        lambda: BASE.graph.append(Call("x", "tool", caller="ghost")),
        UnknownNode,
        "unknown node 'ghost' given as caller",
    ),
    (
        "both edges",
        lambda: BASE.graph.append(Call("x", "tool", predecessor=U, caller=A)),
        ConflictingEdges,
        f"node 'x' has both predecessor={U!r} and caller={A!r}; set at most one",
    ),
    (
        "unknown reads",
        lambda: BASE.graph.append(Call("x", "assistant", reads=(U, "r1", "r2"))),
        UnknownReads,
        "node 'x' reads unknown nodes ['r1', 'r2']",
    ),
    (
        "complete a done node",
        lambda: DONE.complete(D, "x"),
        NotRunning,
        f"cannot complete node {D!r}: its status is 'done', only a 'running' node is completed, exactly once",
    ),
    (
        "complete twice",
        lambda: BASE.complete(T, "x").unwrap().complete(T, "y"),
        NotRunning,
        f"cannot complete node {T!r}: its status is 'done', only a 'running' node is completed, exactly once",
    ),
    (
        "complete unknown",
        lambda: BASE.complete("ghost", "x"),
        UnknownNode,
        "unknown node 'ghost' given as node_id",
    ),
    (
        "complete back to running",
        lambda: BASE.complete(T, "x", "running"),
        InvalidValue,
        "status: expected 'done' or 'error', found 'running'",
    ),
    (
        "retry while running",
        lambda: BASE.retry(A),
        SessionBusy,
        f"cannot retry while nodes are running: [{T!r}]; complete them first",
    ),
    (
        "edit while running",
        lambda: BASE.edit(A, "new"),
        SessionBusy,
        f"cannot edit while nodes are running: [{T!r}]; complete them first",
    ),
    (
        "retry unknown",
        lambda: DONE.retry("ghost"),
        UnknownNode,
        "unknown node 'ghost' given as retry target",
    ),
    (
        "checkout unknown",
        lambda: BASE.checkout("ghost"),
        UnknownNode,
        "unknown node 'ghost' given as checkout target",
    ),
    (
        "fork unknown",
        lambda: BASE.fork("ghost"),
        UnknownNode,
        "unknown node 'ghost' given as fork point",
    ),
    (
        "tool under unknown caller",
        lambda: BASE.record_call("ghost", "ls", {}),
        UnknownNode,
        "unknown node 'ghost' given as caller",
    ),
    (
        "non-JSON payload",
        lambda: BASE.send("user", {"when": object}),
        InvalidPayload,
        "output.when: expected a JSON-like value (dict with str keys, list, str, int, float, bool or None), found a value of type type",
    ),
    (
        "NaN payload",
        lambda: BASE.send("user", [float("nan")]),
        InvalidPayload,
        "output[0]: expected a JSON-like value (dict with str keys, list, str, int, float, bool or None), found nan",
    ),
    (
        "unknown role",
        lambda: BASE.send("robot", "x"),
        InvalidValue,
        "role: expected one of ['user', 'assistant', 'tool', 'system'], found 'robot'",
    ),
    (
        "malformed JSON line",
        lambda: graph_from_jsonl(GOOD_LINE + "\n{not json\n"),
        MalformedRecord,
        "line 2: invalid JSON: Expecting property name enclosed in double quotes at column 2",
    ),
    (
        "JSON line not an object",
        lambda: graph_from_jsonl("[1, 2]\n"),
        MalformedRecord,
        "line 1: expected a JSON object, found [1, 2]",
    ),
    (
        "JSON line missing id",
        lambda: graph_from_jsonl('{"role": "user"}\n'),
        MalformedRecord,
        "line 1: missing field(s) ['id']",
    ),
    (
        "JSON line bad role",
        lambda: graph_from_jsonl('{"id": "a", "role": "bot"}\n'),
        MalformedRecord,
        "line 1: role: expected one of ['user', 'assistant', 'tool', 'system'], found 'bot'",
    ),
    (
        "JSON line out of seq order",
        lambda: graph_from_jsonl('{"id": "a", "role": "user", "seq": 5}\n'),
        MalformedRecord,
        "line 1: seq: expected 0 (seq order), found 5",
    ),
    (
        "JSON line dangling edge",
        lambda: graph_from_jsonl(
            GOOD_LINE + '\n{"id": "b", "role": "user", "predecessor": "zz"}\n'
        ),
        MalformedRecord,
        "line 2: unknown node 'zz' given as predecessor",
    ),
    (
        "JSON line unknown field",
        lambda: graph_from_jsonl('{"id": "a", "role": "user", "colour": 1}\n'),
        MalformedRecord,
        "line 1: unknown field(s) ['colour']; expected only ['id', 'seq', 'created_at', 'role', 'name', 'input', 'output', 'predecessor', 'caller', 'reads', 'status', 'metadata']",
    ),
]


@pytest.mark.parametrize(
    ("operation", "error_type", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_fails_with_typed_error(
    operation: Callable[[], Any], error_type: type, message: str
) -> None:
    """Each bad input returns Failure(error_type) with exactly this message and leaves inputs unchanged."""
    snapshot = (graph_to_jsonl(BASE.graph), BASE.head, BASE.running, graph_to_jsonl(DONE.graph))
    result = operation()
    assert isinstance(result, Failure)
    error = result.failure()
    assert type(error) is error_type
    assert str(error) == message
    assert (
        graph_to_jsonl(BASE.graph),
        BASE.head,
        BASE.running,
        graph_to_jsonl(DONE.graph),
    ) == snapshot


def test_errors_carry_the_offending_ids() -> None:
    """Errors are values with data, not only text."""
    error = BASE.graph.append(Call("x", "assistant", reads=("r1",))).failure()
    assert error == UnknownReads("x", ("r1",))
    assert Graph().complete("z", 1).failure() == UnknownNode("z", "node_id")


def test_unhashable_role_or_status_in_json_is_a_failure() -> None:
    """A list where a role or status belongs is a MalformedRecord, not a TypeError (found by fuzzing)."""
    role = graph_from_jsonl('{"id": "x", "role": []}').failure()
    status = graph_from_jsonl('{"id": "x", "role": "user", "status": {}}').failure()
    assert (
        str(role)
        == "line 1: role: expected one of ['user', 'assistant', 'tool', 'system'], found []"
    )
    assert str(status) == "line 1: status: expected one of ['done', 'running', 'error'], found {}"
