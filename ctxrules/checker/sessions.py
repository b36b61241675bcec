"""The pipeline over whole sessions, turn by turn: invariants 3, 10, 11, 15 parent -> child, and 16.

Short generated sessions branch, retry and check out; long ones (`long_sessions`) age tool
results and reach several batch points, where a batched spec's held-back tightening lands.
A fixed long session comes first, so every check meets batch points.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs
from hypothesis import strategies as st
from pyrsistent import pmap

from ctxrules.check import one_ruler, prefix_stable, protocol_valid, recoverable, rule_step
from ctxrules.check.violations import Violation
from ctxrules.checker.runner import Counterexample, _Found, _search
from ctxrules.checker.subjects import PIPELINE
from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Graph, Session
from ctxrules.generation import CommitMap, ensure_latest_commit
from ctxrules.render import render_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.testing.constants import rule_names
from ctxrules.testing.dag import sessions
from ctxrules.testing.long_sessions import long_session, long_sessions
from ctxrules.testing.ruler import CHECK_RULER
from ctxrules.testing.rules import windows

#: The fixed long session every pipeline meets: its turns and its window and budget.
FIXED_TURNS = 48
FIXED_WINDOWS = ((32_000, 12_000),)


def _grow(
    pipeline: Pipeline,
    graph: Graph,
    calls: Iterable[Call],
    facts_at: Callable[[Call], Facts],
) -> Counterexample | None:
    """Build a commit at each call in turn; the first step that breaks an invariant, if any."""
    known: CommitMap = pmap()
    previous: ContextCommit | None = None
    commit: ContextCommit | None = None
    facts = Facts(tokenizer=CHECK_RULER)
    for call in calls:
        facts = facts_at(call)
        commit, known = ensure_latest_commit(known, graph, call.id, pipeline, facts).unwrap()
        violations = one_ruler(commit, facts.tokenizer) + protocol_valid(render_commit(commit))
        if previous is not None:
            prefix = attrs.evolve(commit, items=commit.items[: len(previous.items)], digest=-1)
            violations += rule_step(previous, prefix)
            violations += prefix_stable(previous, commit, batched=pipeline.batching is not None)
        if violations:
            return Counterexample(PIPELINE, tuple(violations), previous or commit, commit, facts)
        previous = commit
    if commit is not None:
        # Invariant 16 against the DAG itself: each handle gives back the node's original.
        lost: list[Violation] = recoverable(commit, graph)
        if lost:
            return Counterexample(PIPELINE, tuple(lost), commit, commit, facts)
    return None


def _long(
    pipeline: Pipeline, session: Session, times: dict[str, float], facts: Facts
) -> Counterexample | None:
    return _grow(
        pipeline,
        session.graph,
        session.branch(),
        lambda call: attrs.evolve(facts, now=times.get(call.id, 0.0) + 1.0),
    )


def fixed_session_run(pipeline: Pipeline) -> Counterexample | None:
    """The pipeline over the fixed long session, at a large and a small window."""
    names = tuple(n for named in pipeline.rules for n in rule_names(named.rule))[:8]
    built = long_session(0, FIXED_TURNS, names)
    for window, budget in FIXED_WINDOWS:
        facts = Facts(tokenizer=CHECK_RULER, context_window=window, budget=budget)
        found = _long(pipeline, built.session, built.times, facts)
        if found is not None:
            return found
    return None


def check_sessions(
    pipeline: Pipeline, *, examples: int, seed: int | None = None
) -> Counterexample | None:
    """The pipeline over the fixed long session, then generated short and long sessions.

    Each commit keeps invariants 10 and 11; parent -> child, 3 and the rest of a rule
    step, and 15 (prefix stability between batch points); the last commit of a session
    keeps 16 against the DAG.
    """
    fixed = fixed_session_run(pipeline)
    if fixed is not None:
        return fixed
    found: list[Counterexample] = []
    names = tuple(n for named in pipeline.rules for n in rule_names(named.rule))[:8]

    def body(data: st.DataObject) -> None:
        window, budget = data.draw(windows(), label="window")
        facts = Facts(tokenizer=CHECK_RULER, context_window=window, budget=budget)
        if data.draw(st.booleans(), label="long session"):
            built = data.draw(long_sessions(names=names), label="session")
            counterexample = _long(pipeline, built.session, built.times, facts)
        else:
            session: Session = data.draw(sessions(max_steps=20), label="session")
            gaps = iter(data.draw(st.lists(st.floats(0, 5000), min_size=64, max_size=64)))
            clock = [0.0]

            def at(_call: Call) -> Facts:
                clock[0] += next(gaps, 60.0)
                return attrs.evolve(facts, now=clock[0])

            counterexample = _grow(pipeline, session.graph, session.branch(), at)
        if counterexample is not None:
            found.append(counterexample)
            raise _Found

    try:
        _search(body, examples, seed)
    except _Found:
        return found[-1]
    return None
