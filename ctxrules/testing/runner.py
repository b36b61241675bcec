"""Search generated commits and sessions for a rule that breaks an invariant (``ctxrules check``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from pyrsistent import pmap

from ctxrules.check import (
    Violation,
    attached_once,
    one_ruler,
    one_summary,
    prefix_stable,
    protocol_valid,
    rule_step,
)
from ctxrules.commit import ContextCommit, commit_to_json
from ctxrules.dag import Session
from ctxrules.generation import CommitMap, ensure_latest_commit
from ctxrules.render import render_commit
from ctxrules.rules import Facts, NamedRule, Pipeline, Rule
from ctxrules.testing.commits import commits
from ctxrules.testing.dag import sessions
from ctxrules.testing.purity import in_two_worlds
from ctxrules.testing.rules import facts_for
from ctxrules.tokens import HeuristicCounter

#: The invariants a rule can break, which `rule_violations` checks.
RULE_INVARIANTS = (3, 4, 6, 8, 10, 11, 12, 13, 15)
PIPELINE = "<pipeline>"


@attrs.frozen
class Counterexample:
    """The smallest input found on which ``rule`` breaks something, and what it broke."""

    rule: str
    violations: tuple[Violation, ...]
    before: ContextCommit
    after: ContextCommit | None
    facts: Facts
    error: str | None = None


def rule_violations(
    rule: Rule, before: ContextCommit, facts: Facts
) -> tuple[ContextCommit, list[Violation]]:
    """Run ``rule`` on ``before`` (twice, in two worlds) and return its output and violations."""
    snapshot = commit_to_json(before)
    after, again = in_two_worlds(lambda: rule(before, facts))
    found = rule_step(before, after)
    found += one_ruler(after, facts.tokenizer)
    found += protocol_valid(render_commit(after))
    found += one_summary(after) if not one_summary(before) else []
    found += attached_once(after) if not attached_once(before) else []
    if again != after:
        found.append(
            Violation(
                8, (), "the same output for the same input", "a different output on a second run"
            )
        )
    if commit_to_json(before) != snapshot:
        found.append(Violation(8, (), "the input commit unmodified", "a modified input"))
    return after, found


class _Found(Exception):  # control flow inside the search, never escapes
    pass


def _search(body: Callable[[st.DataObject], None], examples: int, seed: int | None) -> None:
    config = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=seed is None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    test = config(given(st.data())(body))
    if seed is not None:
        test = hypothesis_seed(seed)(test)
    test()


def check_rule(
    name: str, rule: Rule, *, examples: int, seed: int | None = None
) -> Counterexample | None:
    """The shrunk counterexample on random commits, or None if none was found."""
    found: list[Counterexample] = []

    def body(data: st.DataObject) -> None:
        # Small commits find every broken rule we know of and shrink in seconds.
        before = data.draw(commits(max_items=12), label="commit")
        facts = data.draw(facts_for(before), label="facts")
        try:
            after, violations = rule_violations(rule, before, facts)
        except Exception as error:  # noqa: BLE001 - a user's rule may raise anything; we report it
            found.append(
                Counterexample(name, (), before, None, facts, f"{type(error).__name__}: {error}")
            )
            raise _Found from None
        if violations:
            # Hypothesis replays the shrunk example last, so the last one kept is the smallest.
            found.append(Counterexample(name, tuple(violations), before, after, facts))
            raise _Found

    try:
        _search(body, examples, seed)
    except _Found:
        return found[-1]
    return None


def check_sessions(
    pipeline: Pipeline, *, examples: int, seed: int | None = None
) -> Counterexample | None:
    """Invariants 3, 10, 11 and 15 parent -> child as a generated session grows under ``pipeline``."""
    found: list[Counterexample] = []
    ruler = HeuristicCounter()

    def body(data: st.DataObject) -> None:
        session: Session = data.draw(sessions(max_steps=20), label="session")
        known: CommitMap = pmap()
        previous: ContextCommit | None = None
        now = 0.0
        for call in session.branch():
            now += data.draw(st.floats(0, 5000), label="seconds")
            facts = Facts(now=now, tokenizer=ruler)
            commit, known = ensure_latest_commit(
                known, session.graph, call.id, pipeline, facts
            ).unwrap()
            violations = one_ruler(commit, ruler) + protocol_valid(render_commit(commit))
            if previous is not None:
                prefix = attrs.evolve(commit, items=commit.items[: len(previous.items)], digest=-1)
                violations += rule_step(previous, prefix)
                violations += prefix_stable(previous, commit, batched=pipeline.batching is not None)
            if violations:
                found.append(
                    Counterexample(PIPELINE, tuple(violations), previous or commit, commit, facts)
                )
                raise _Found
            previous = commit

    try:
        _search(body, examples, seed)
    except _Found:
        return found[-1]
    return None


def subjects(pipeline: Pipeline) -> Iterator[NamedRule]:
    """Each rule of the pipeline on its own, then the whole pipeline."""
    yield from pipeline.rules
    yield NamedRule(PIPELINE, pipeline.run)
