"""Invariant 15, prefix stability: between batch points a request only grows at its end."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pmap

from ctxrules.check import extends, prefix_stable
from ctxrules.commit import ContextCommit
from ctxrules.dag import Session
from ctxrules.generation import CommitMap, ensure_latest_commit
from ctxrules.render import render_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.rules.batching import BatchReason, last_batch
from ctxrules.spec import load_spec
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
RULES = """
[[rules]]
use = "cap_tool_result"
[rules.params]
max_chars = 400
[[rules]]
use = "age_tool_results"
[rules.params]
tail_turns = 1
[[rules]]
use = "gate_tool_results"
[rules.params]
min_turns = 2
min_seconds = 0
min_tokens = 20
protect_first_n = 0
"""
BATCHED = load_spec(
    RULES + "[batching]\nevery_turns = 3\nbudget_share = 0.5\ncold_after_seconds = 600\n"
    "min_history_tokens = 50\n"
).unwrap()
UNBATCHED = load_spec(RULES).unwrap()

#: One turn: the gap before it in seconds, and the sizes (in lines) of its tool results.
turns = st.lists(
    st.tuples(st.floats(0, 900), st.lists(st.integers(1, 40), max_size=2)), min_size=2, max_size=8
)


def session_of(plan: list[tuple[float, list[int]]]) -> tuple[Session, dict[str, float]]:
    """A session of user / assistant turns with tool calls, and each node's time."""
    session, times, now = Session("s"), {}, 0.0
    for number, (gap, sizes) in enumerate(plan):
        now += gap
        session = session.send("user", f"step {number}").unwrap()
        times[session.head] = now
        session = session.send("assistant", f"working on {number}").unwrap()
        times[session.head] = now
        for k, lines in enumerate(sizes):
            output = "\n".join(f"line {j} of result {number}.{k}" for j in range(lines))
            session = session.record_call(session.head, "grep", {"q": k}, output).unwrap()
    return session, times


def commits_along(
    session: Session, pipeline: Pipeline, times: dict[str, float]
) -> list[ContextCommit]:
    """The commit of every node of the head's branch, oldest first, as the engine makes them."""
    known: CommitMap = pmap()
    built = []
    for call in session.branch():
        facts = Facts(now=times.get(call.id, 0.0), tokenizer=RULER, context_window=2_000)
        commit, known = ensure_latest_commit(
            known, session.graph, call.id, pipeline, facts
        ).unwrap()
        built.append(commit)
    return built


@given(turns)
def test_requests_extend_between_batch_points(plan: list[tuple[float, list[int]]]) -> None:
    """Invariant 15: without a new batch point, the next request starts with the previous one."""
    session, times = session_of(plan)
    built = commits_along(session, BATCHED, times)
    for parent, child in itertools.pairwise(built):
        assert prefix_stable(parent, child) == []
        if last_batch(child)[0] == last_batch(parent)[0]:
            assert extends(render_commit(parent), render_commit(child))


@given(turns)
def test_held_back_tightening_lands_at_the_next_batch_point(
    plan: list[tuple[float, list[int]]],
) -> None:
    """Invariant 15 loses nothing: settling a batched commit gives the states aging every turn gives."""
    session, times = session_of(plan)
    last = commits_along(session, BATCHED, times)[-1]
    eager = commits_along(session, UNBATCHED, times)[-1]
    facts = Facts(now=max(times.values()), tokenizer=RULER, context_window=2_000)
    settled = BATCHED.settle(last, facts, BatchReason.COLD)
    assert [i.state for i in settled.items] == [i.state for i in eager.items]
    assert last_batch(settled) == (last_batch(last)[0] + 1, BatchReason.COLD)


def test_a_pipeline_without_batching_that_ages_sent_items_breaks_invariant_15() -> None:
    """Invariant 15: aging every turn rewrites the middle of the prompt, and the check says so."""
    session, times = session_of([(1.0, [30]), (1.0, [30]), (1.0, [30]), (1.0, [30])])
    built = commits_along(session, UNBATCHED, times)
    found = [v for p, c in itertools.pairwise(built) for v in prefix_stable(p, c, batched=False)]
    assert found
    assert {v.invariant for v in found} == {15}
    assert "invariant 15 (prefix stability)" in found[0].message
    batched = commits_along(session, BATCHED, times)
    assert all(prefix_stable(p, c) == [] for p, c in itertools.pairwise(batched))
