"""Property tests of the DAG: append-only, checkout, siblings, immutability, JSON round trip."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from returns.result import Success

from ctxrules.dag import (
    Call,
    Graph,
    Session,
    call_from_json,
    call_to_json,
    freeze,
    graph_from_jsonl,
    graph_to_jsonl,
    siblings,
    thaw,
)
from ctxrules.testing import json_values, session_steps, sessions
from ctxrules.testing.dag import apply_step


@given(sessions(), session_steps())
def test_invariant_1_a_step_only_adds_nodes(session: Session, step: Any) -> None:
    """Invariant 1: after any step, every old node is still there and unchanged unless completed."""
    after = apply_step(session, step)
    assert len(after.graph) >= len(session.graph)
    for node_id, old in session.graph.nodes.items():
        new = after.graph.nodes[node_id]
        if step.kind == "complete" and old.status.value == "running":
            assert (new.id, new.seq, new.input, new.predecessor, new.caller) == (
                old.id,
                old.seq,
                old.input,
                old.predecessor,
                old.caller,
            )
        else:
            assert new == old
    assert list(after.graph.order[: len(session.graph)]) == list(session.graph.order)


@given(sessions(), st.data())
def test_invariant_9_checkout_appends_nothing(session: Session, data: st.DataObject) -> None:
    """Invariant 9: checkout returns the very same graph and only moves the head."""
    if not session.graph.order:
        return
    target = data.draw(st.sampled_from(list(session.graph.order)))
    moved = session.checkout(target).unwrap()
    assert moved.graph is session.graph
    assert moved.head == target
    assert moved.running == session.running


@given(sessions(), st.data(), json_values(3))
def test_retry_and_edit_make_siblings(session: Session, data: st.DataObject, payload: Any) -> None:
    """Retry and edit add a sibling under the same predecessor, with same or new content."""
    if not session.graph.order or session.running:
        return
    target = data.draw(st.sampled_from(list(session.graph.order)))
    original = session.graph.nodes[target]
    for result, output in (
        (session.retry(target), original.output),
        (session.edit(target, payload), freeze(payload).unwrap()),
    ):
        new = result.unwrap()
        added = new.graph.nodes[new.graph.order[-1]]
        assert added.id != target
        assert (added.predecessor, added.caller, added.role) == (
            original.predecessor,
            original.caller,
            original.role,
        )
        assert added.output == output
        assert {c.id for c in siblings(new.graph, target)} == {
            c.id for c in siblings(new.graph, added.id)
        }
        assert target in {c.id for c in siblings(new.graph, added.id)}


@given(sessions())
def test_seq_strictly_increasing(session: Session) -> None:
    """Seq equals the append position, so it strictly increases in order."""
    assert [session.graph.nodes[i].seq for i in session.graph.order] == list(
        range(len(session.graph))
    )


@given(json_values())
def test_payloads_are_frozen_and_inputs_unmodified(payload: Any) -> None:
    """Freezing copies: mutating the caller's object afterwards cannot change the node."""
    original = copy.deepcopy(payload)
    call = Call("n", "user", output=payload)
    assert thaw(call.output) == original
    if isinstance(payload, dict):
        payload["__mutated__"] = 1
    elif isinstance(payload, list):
        payload.append("__mutated__")
    assert call.output_value() == original


@given(sessions())
def test_json_round_trip_is_identity(session: Session) -> None:
    """Graph -> JSON Lines -> Graph gives an equal graph, and each call round-trips alone."""
    text = graph_to_jsonl(session.graph)
    back = graph_from_jsonl(text)
    assert isinstance(back, Success)
    assert back.unwrap() == session.graph
    assert graph_to_jsonl(back.unwrap()) == text
    for call in session.graph.nodes.values():
        assert call_from_json(call_to_json(call)).unwrap() == call


def test_jsonl_keeps_unicode_line_separators_inside_strings() -> None:
    """U+0085 and U+2028 inside a payload do not split a JSON Lines record."""
    session = Session("s").send("user", "a\x85b\u2028c\r").unwrap()
    assert graph_from_jsonl(graph_to_jsonl(session.graph)).unwrap() == session.graph


def test_empty_graph_round_trips() -> None:
    """The empty graph serialises to nothing and back."""
    assert graph_from_jsonl(graph_to_jsonl(Graph())).unwrap() == Graph()
