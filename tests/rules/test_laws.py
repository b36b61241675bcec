"""Laws as data: every built-in rule, every spec and random pipelines keep invariants 3, 4, 8, 10, 11, 13."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pmap

from ctxrules.check import one_ruler, protocol_valid, rule_step
from ctxrules.commit import ContextCommit, ContextItem, State, commit_to_json
from ctxrules.dag import Session
from ctxrules.generation import ensure_latest_commit
from ctxrules.render import counted, render_commit
from ctxrules.rules import Facts, NamedRule, Pipeline, Rule, builtins
from ctxrules.testing import builtin_params, commits, facts_for, pipelines, sessions
from ctxrules.tokens import HeuristicCounter

SPECS = sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.toml"))
REGISTRY = builtins()


def _spec_pipeline(path: Path) -> Pipeline:
    spec = pytest.importorskip("ctxrules.spec", reason="the spec language is not built yet")
    return spec.load_spec(path).unwrap()


# Each subject is a way to get a rule for a drawn example; laws are checked on all of them.
Subject = Callable[[st.DataObject], tuple[Rule, bool]]


def _builtin(name: str) -> Subject:
    def draw(data: st.DataObject) -> tuple[Rule, bool]:
        params = data.draw(builtin_params(REGISTRY[name]), label="params")
        return REGISTRY[name].build(params).unwrap(), REGISTRY[name].idempotent

    return draw


def _spec(path: Path) -> Subject:
    def draw(_: st.DataObject) -> tuple[Rule, bool]:
        # A pipeline is not declared idempotent: a later rule may enable an earlier one.
        return _spec_pipeline(path).run, False

    return draw


def _random_pipeline(data: st.DataObject) -> tuple[Rule, bool]:
    return data.draw(pipelines(), label="pipeline").run, False


SUBJECTS: dict[str, Subject] = {
    **{f"builtin:{name}": _builtin(name) for name in sorted(REGISTRY)},
    **{f"spec:{path.name}": _spec(path) for path in SPECS},
    "random-pipeline": _random_pipeline,
}


def violations_of(rule: Rule, before: ContextCommit, facts: Facts, idempotent: bool) -> list[str]:
    """Every law broken by ``rule`` on ``before``; the laws are the invariant predicates."""
    snapshot = commit_to_json(before)
    after = rule(before, facts)
    problems = [v.message for v in rule_step(before, after)]
    problems += [v.message for v in one_ruler(after, facts.tokenizer)]
    problems += [v.message for v in protocol_valid(render_commit(after))]
    if rule(before, facts) != after:
        problems.append("invariant 8 (pure rules): the same input twice gave different outputs")
    if commit_to_json(before) != snapshot:
        problems.append("invariant 8 (pure rules): the input commit was modified")
    if idempotent and rule(after, facts) != after:
        problems.append("declared idempotent, but a second run changed the commit")
    return problems


@pytest.mark.parametrize("subject", SUBJECTS.values(), ids=SUBJECTS.keys())
@given(data=st.data())
def test_laws_on_random_commits(subject: Subject, data: st.DataObject) -> None:
    """Invariants 3, 4, 8, 10, 11 and 13 hold for every subject on random commits and facts."""
    rule, idempotent = subject(data)
    before = data.draw(commits(), label="commit")
    facts = data.draw(facts_for(before), label="facts")
    assert violations_of(rule, before, facts, idempotent) == []


@pytest.mark.parametrize("subject", SUBJECTS.values(), ids=SUBJECTS.keys())
@given(data=st.data(), session=sessions(max_steps=25))
def test_invariant_3_parent_to_child_along_a_session(
    subject: Subject, data: st.DataObject, session: Session
) -> None:
    """Invariant 3 parent -> child: as turns and the clock advance, no item's state loosens."""
    rule, _ = subject(data)
    pipeline = Pipeline((NamedRule("subject", rule),))
    heads = [c.id for c in session.branch()]
    known, previous = pmap(), None
    now = 0.0
    for head in heads:
        now += data.draw(st.floats(0, 5000), label="seconds")
        facts = Facts(now=now, tokenizer=HeuristicCounter())
        commit, known = ensure_latest_commit(known, session.graph, head, pipeline, facts).unwrap()
        assert one_ruler(commit, facts.tokenizer) == []
        if previous is not None:
            prefix = attrs.evolve(commit, items=commit.items[: len(previous.items)], digest=-1)
            assert [v.message for v in rule_step(previous, prefix)] == []
        previous = commit


def test_the_laws_can_fail() -> None:
    """A rule that loosens aged items back to full is caught (the law suite is able to fail)."""
    ruler = HeuristicCounter()
    aged = counted(
        ContextItem("n1", "tool", state="aged", rendered="stub", tool_name="t", tool_call_id="c"),
        ruler,
    )
    before = ContextCommit("s").with_items([aged])

    def loosen(commit: ContextCommit, facts: Facts) -> ContextCommit:
        return commit.replace_items(
            {0: counted(attrs.evolve(commit.items[0], state=State.FULL), facts.tokenizer)}
        )

    problems = violations_of(loosen, before, Facts(tokenizer=ruler), idempotent=True)
    assert problems == [
        "invariant 3 (monotone tightening) at n1: expected a state at least as tight as 'aged', found 'full'"
    ]
