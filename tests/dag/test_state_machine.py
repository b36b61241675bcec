"""A state machine runs random session operations on the DAG and on a plain reference model."""

from __future__ import annotations

import itertools
from typing import Any

import hypothesis.strategies as st
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from returns.result import Failure, Success

from ctxrules.dag import Session, branch, graph_to_jsonl
from ctxrules.testing import json_values

ROLES = st.sampled_from(["user", "assistant", "system"])


class SessionMachine(RuleBasedStateMachine):
    """Invariants 1 and 9 plus model agreement: the DAG behaves like dicts and lists."""

    def __init__(self) -> None:
        super().__init__()
        self.session = Session("s_machine")
        # The reference model: plain dicts and lists, no sharing, no cleverness.
        self.nodes: dict[str, dict[str, Any]] = {}
        self.order: list[str] = []
        self.head: str | None = None
        self.running: set[str] = set()
        self.before_snapshot = graph_to_jsonl(self.session.graph)

    def _step(self, result: Any, *, expect_ok: bool) -> Session | None:
        before = self.session
        snapshot = graph_to_jsonl(before.graph)
        if expect_ok:
            assert isinstance(result, Success), result
        else:
            assert isinstance(result, Failure), result
        # Inputs are never modified: the old session still serialises byte for byte the same.
        assert graph_to_jsonl(before.graph) == snapshot
        return result.unwrap() if expect_ok else None

    def _record(self, new: Session) -> str:
        node_id = new.graph.order[-1]
        call = new.graph.nodes[node_id]
        self.nodes[node_id] = {
            "role": call.role.value,
            "output": call.output_value(),
            "predecessor": call.predecessor,
            "caller": call.caller,
            "status": call.status.value,
        }
        self.order.append(node_id)
        return node_id

    @rule(role=ROLES, payload=json_values(4))
    def send(self, role: str, payload: Any) -> None:
        """Send appends one node after the head and moves the head."""
        new = self._step(self.session.send(role, payload), expect_ok=True)
        assert new is not None
        node_id = self._record(new)
        assert self.nodes[node_id]["predecessor"] == self.head
        assert self.nodes[node_id]["output"] == payload
        self.head = node_id
        self.session = new

    @precondition(lambda self: self.head is not None)
    @rule(payload=json_values(4), running=st.booleans())
    def tool(self, payload: Any, running: bool) -> None:
        """A tool call hangs off the head by caller and leaves the head where it is."""
        status = "running" if running else "done"
        result = self.session.record_call(self.head, "grep", {"q": payload}, status=status)
        new = self._step(result, expect_ok=True)
        assert new is not None
        node_id = self._record(new)
        assert self.nodes[node_id]["caller"] == self.head
        if running:
            self.running.add(node_id)
        assert new.head == self.head
        self.session = new

    @precondition(lambda self: self.running)
    @rule(data=st.data(), payload=json_values(4))
    def complete(self, data: st.DataObject, payload: Any) -> None:
        """Complete fills a running node once; a second complete fails."""
        node_id = data.draw(st.sampled_from(sorted(self.running)))
        new = self._step(self.session.complete(node_id, payload), expect_ok=True)
        assert new is not None
        self.nodes[node_id]["output"] = payload
        self.nodes[node_id]["status"] = "done"
        self.running.discard(node_id)
        self._step(new.complete(node_id, payload), expect_ok=False)
        self.session = new

    @precondition(lambda self: self.order)
    @rule(data=st.data(), payload=json_values(4), edit=st.booleans())
    def retry_or_edit(self, data: st.DataObject, payload: Any, edit: bool) -> None:
        """retry/edit add a sibling under the same predecessor, and fail while running."""
        target = data.draw(st.sampled_from(self.order))
        result = self.session.edit(target, payload) if edit else self.session.retry(target)
        if self.running:
            self._step(result, expect_ok=False)
            return
        new = self._step(result, expect_ok=True)
        assert new is not None
        node_id = self._record(new)
        original = self.nodes[target]
        assert self.nodes[node_id]["predecessor"] == original["predecessor"]
        assert self.nodes[node_id]["caller"] == original["caller"]
        assert self.nodes[node_id]["output"] == (payload if edit else original["output"])
        if original["caller"] is None:
            self.head = node_id
        self.session = new

    @precondition(lambda self: self.order)
    @rule(data=st.data())
    def checkout(self, data: st.DataObject) -> None:
        """Invariant 9: checkout moves the head and appends nothing (the graph is the same)."""
        target = data.draw(st.sampled_from(self.order))
        new = self._step(self.session.checkout(target), expect_ok=True)
        assert new is not None
        assert new.graph is self.session.graph
        self.head = target
        self.session = new

    @precondition(lambda self: self.order)
    @rule(data=st.data())
    def fork(self, data: st.DataObject) -> None:
        """Fork shares the graph (no copy) and starts at the fork point."""
        target = data.draw(st.sampled_from(self.order))
        new = self._step(self.session.fork(target), expect_ok=True)
        assert new is not None
        assert new.graph is self.session.graph
        assert new.session_id != self.session.session_id
        self.head = target
        self.session = new

    @rule(node_id=st.text(max_size=5))
    def unknown_checkout(self, node_id: str) -> None:
        """Checking out an id the graph lacks fails and changes nothing."""
        if node_id not in self.nodes:
            self._step(self.session.checkout(node_id), expect_ok=False)

    @invariant()
    def agrees_with_model(self) -> None:
        """The DAG holds exactly the model's nodes, in the model's order, with its content."""
        graph = self.session.graph
        assert list(graph.order) == self.order
        assert self.session.head == self.head
        assert set(self.session.running) == self.running
        for node_id, expected in self.nodes.items():
            call = graph.nodes[node_id]
            got = {
                "role": call.role.value,
                "output": call.output_value(),
                "predecessor": call.predecessor,
                "caller": call.caller,
                "status": call.status.value,
            }
            assert got == expected

    @invariant()
    def seq_strictly_increasing(self) -> None:
        """Seq is the position in append order, so it strictly increases."""
        seqs = [self.session.graph.nodes[i].seq for i in self.session.graph.order]
        assert seqs == list(range(len(seqs)))

    @invariant()
    def invariant_1_append_only(self) -> None:
        """Invariant 1: every earlier line of the graph survives; only running ones may change."""
        now = graph_to_jsonl(self.session.graph).split("\n")[:-1]
        before = self.before_snapshot.split("\n")[:-1]
        assert len(now) >= len(before)
        for old, new in zip(before, now, strict=False):
            if old != new:
                assert '"status": "running"' in old
        self.before_snapshot = graph_to_jsonl(self.session.graph)

    @invariant()
    def branch_follows_predecessors(self) -> None:
        """The branch walks from a root to the head along predecessor edges."""
        calls = branch(self.session.graph, self.head)
        if self.head is not None:
            assert calls[-1].id == self.head
            assert calls[0].predecessor is None
        for earlier, later in itertools.pairwise(calls):
            assert later.predecessor == earlier.id


TestSessionMachine = SessionMachine.TestCase
TestSessionMachine.settings = settings(stateful_step_count=40)
