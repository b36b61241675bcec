"""What a turn reads of its new items, counted: each goes through the cap once, the tracker reads it once.

The reference tracker reads what the request will send (the capped item), and it reads the
items the generation appended, not items of its own made again: a new tool result is
capped (and its hints looked up) once a turn, not once for the tracker and once for the commit.
"""

from __future__ import annotations

from collections import Counter

import pytest

from ctxrules.commit import ContextItem
from ctxrules.dag import Session
from ctxrules.engine import DefaultContextEngine
from ctxrules.rules import Facts, NamedRule, Pipeline, ReferenceTracker
from ctxrules.rules.cap import cap_tool_result
from ctxrules.tokens import HeuristicCounter

CAP = 400


def _turns(engine: DefaultContextEngine, turns: int) -> Session:
    session = Session("s_reads")
    for turn in range(turns):
        session = session.send("user", f"read src/pkg/mod_{turn}.py").unwrap()
        session = session.send("assistant", "Reading it.").unwrap()
        assistant = session.head
        assert assistant is not None
        session = session.record_call(
            assistant,
            "read_file",
            {"path": f"src/pkg/mod_{turn}.py"},
            f"def handler_{turn}(): return {turn}\n" * 60,
        ).unwrap()
        engine.prepare(session, window=32_000, now=turn * 30.0).unwrap()
    return session


def test_each_new_item_is_capped_and_read_by_the_tracker_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Work counted, not timed: per turn, one arrival and one tracker read per new item."""
    pipeline = Pipeline((NamedRule("cap", cap_tool_result(CAP, 0.3, hint_chars=120)),))
    engine = DefaultContextEngine(pipeline=pipeline, tokenizer=HeuristicCounter())
    arrived: Counter[str] = Counter()
    read: Counter[str] = Counter()
    arrive, observe = Pipeline.on_arrival, ReferenceTracker.observe

    def counting_arrival(
        self: Pipeline, item: ContextItem, facts: Facts, position: int = 0
    ) -> ContextItem:
        arrived[item.source_node_id] += 1
        return arrive(self, item, facts, position)

    def counting_observe(self: ReferenceTracker, items: object) -> ReferenceTracker:
        given = list(items)  # type: ignore[call-overload]
        read.update(item.source_node_id for item in given)
        # What the tracker reads is what is sent: a capped result, never the original.
        assert all(len(item.rendered) <= CAP for item in given if item.is_tool)
        return observe(self, given)

    monkeypatch.setattr(Pipeline, "on_arrival", counting_arrival)
    monkeypatch.setattr(ReferenceTracker, "observe", counting_observe)
    session = _turns(engine, 12)
    assert len(session.graph) == 36
    assert set(arrived) == set(read) == set(session.graph.nodes)
    assert set(arrived.values()) == set(read.values()) == {1}
