"""Check a whole spec: each rule, the pipeline, other hash seeds and sessions (``ctxrules check``)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs

from ctxrules.checker.hashseed import CHILDREN, OWN_CHILDREN, Case, differences
from ctxrules.checker.runner import (
    RERUNS,
    Checked,
    Counterexample,
    Fresh,
    Outcome,
    Run,
    check_rule,
    check_rules,
)
from ctxrules.checker.sessions import check_sessions
from ctxrules.checker.subjects import PIPELINE, subjects
from ctxrules.commit import ContextCommit
from ctxrules.rules import Facts, NamedRule, Pipeline, Rule
from ctxrules.spec import load_spec
from ctxrules.testing.constants import rule_names

#: Reruns of a built-in or declarative rule on a small input (user code gets `RERUNS`).
OWN_RERUNS = 1
#: Called after each step with (steps done, steps in all, what was checked).
Progress = Callable[[int, int, str], None]


@attrs.frozen
class SpecReport:
    """The first counterexample found (None if the spec kept every law) and the work done."""

    counterexample: Counterexample | None
    rules: int
    examples: int
    sessions: int
    hash_seed_cases: int
    #: The child processes (hash seeds) the cases were rerun in.
    hash_seed_children: int = CHILDREN


def session_examples(examples: int) -> int:
    """How many generated sessions go with ``examples`` commits per rule."""
    return max(examples // 8, 10)


def fresh_instance(spec: str | Path, index: int, *, allow_imports: bool = False) -> Fresh:
    """A factory of new instances of the spec's rule at ``index`` (the pipeline after the last).

    The spec is loaded again, so each instance comes from its factory anew: state kept in an
    instance (a memo, a counter) starts empty.
    """

    def make() -> Rule:
        pipeline = load_spec(spec, allow_imports=allow_imports)
        return [named.rule for named in subjects(pipeline.unwrap())][index]

    return make


def is_user_code(rule: object) -> bool:
    """Whether the rule is code from outside ctxrules (a ``use = "module:factory"`` entry).

    Built-in and declarative rules are ctxrules's own, built from parameters alone: a
    fresh instance of one is the same function again, so only user code is rebuilt for reruns.

    >>> from ctxrules.rules.idle import clear_idle
    >>> def mine(commit, facts):
    ...     return commit
    >>> mine.__module__ = "my_rules"
    >>> is_user_code(clear_idle(60.0, "[cleared]", ())), is_user_code(mine)
    (False, True)
    """
    owner = getattr(rule, "__self__", None)
    if isinstance(owner, Pipeline):
        return any(is_user_code(named.rule) for named in owner.rules)
    module = getattr(rule, "__module__", None) or type(rule).__module__
    return not str(module).startswith("ctxrules.")


def check_pipeline(
    spec: str | Path,
    pipeline: Pipeline,
    *,
    examples: int,
    seed: int | None = None,
    allow_imports: bool = False,
    progress: Progress | None = None,
    children: int | None = None,
) -> SpecReport:
    """Search for a counterexample of every law for each rule, the pipeline and its sessions.

    Clean runs of each rule are then repeated in ``children`` child processes with other
    hash seeds (by default `CHILDREN` when the spec holds code of its own, `OWN_CHILDREN`
    when it is made of ctxrules's rules alone), while generated sessions grow under the
    whole pipeline; what the children find is reported before what the sessions find.
    """
    tasks = [*subjects(pipeline)]
    total = len(tasks) + 2
    cases: list[Case] = []
    if children is None:
        children = CHILDREN if is_user_code(pipeline.run) else OWN_CHILDREN

    def report(found: Counterexample | None) -> SpecReport:
        sessions = session_examples(examples)
        return SpecReport(found, len(pipeline.rules), examples, sessions, len(cases), children)

    rules = [_checked(spec, named, index, allow_imports) for index, named in enumerate(tasks)]
    found = _check_each(rules, cases, examples=examples, seed=seed, progress=progress)
    if found is not None:
        return report(found)
    # A rule's own defects come first: what another hash seed shows, before what the
    # sessions show of the pipeline (a set-order rule may also rewrite sent items, say).
    # The sessions grow here while the children, other processes, rerun the cases: the
    # check waits for the slower of the two, not for both in turn.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(
            differences, str(spec), cases, allow_imports=allow_imports, seed=seed, children=children
        )
        sessions = check_sessions(pipeline, examples=session_examples(examples), seed=seed)
        difference = pending.result()
    if progress is not None:
        progress(total - 1, total, "each rule under other PYTHONHASHSEEDs")
    if isinstance(difference, str):
        facts = Facts()
        empty = ContextCommit("")
        return report(Counterexample(PIPELINE, (), empty, None, facts, difference))
    if difference is not None:
        name = tasks[difference.subject].name
        found = Counterexample(
            name, (difference.violation,), difference.before, difference.after, difference.facts
        )
        return report(attrs.evolve(found, other=difference.other))
    if progress is not None:
        progress(total, total, f"{PIPELINE} over generated sessions")
    return report(sessions)


def _checked(spec: str | Path, named: NamedRule, index: int, allow_imports: bool) -> Checked:
    """The spec's subject at ``index`` as searched: user code rebuilt and rerun three times."""
    user = is_user_code(named.rule)
    return Checked(
        named.name,
        named.rule,
        fresh_instance(spec, index, allow_imports=allow_imports) if user else None,
        # ctxrules's own rules hold no state to build anew or count calls with: one
        # rerun, on an equal copy (a result that follows object identity), says it all.
        RERUNS if user else OWN_RERUNS,
    )


def _check_each(
    rules: list[Checked],
    cases: list[Case],
    *,
    examples: int,
    seed: int | None,
    progress: Progress | None,
) -> Counterexample | None:
    """The first rule's counterexample, in order; or None, with each rule's clean runs in ``cases``.

    Rules that look for the same names meet the same inputs: one search draws each input
    once for all of them (`check_rules`), and a counterexample it found beside another
    rule, unshrunk, is searched for again on the rule alone, as it would have been.
    """
    names = [rule_names(checked.rule) for checked in rules]
    outcomes: dict[int, Outcome] = {}
    runs: dict[int, list[Run]] = {}
    for index, checked in enumerate(rules):
        if index not in outcomes:
            group = [
                k
                for k in range(index, len(rules))
                if k not in outcomes and names[k] == names[index]
            ]
            runs.update((k, []) for k in group)
            searched = check_rules(
                [rules[k] for k in group],
                examples=examples,
                seed=seed,
                samples=[runs[k] for k in group],
            )
            outcomes.update(zip(group, searched, strict=True))
        found = outcomes[index].found
        if not outcomes[index].final:
            alone = check_rule(
                checked.name,
                checked.rule,
                examples=examples,
                seed=seed,
                fresh=checked.fresh,
                reruns=checked.reruns,
            )
            found = alone or found
        if progress is not None:
            progress(index + 1, len(rules) + 2, checked.name)
        if found is not None:
            return found
    cases += [(index, *run) for index in range(len(rules)) for run in runs[index]]
    return None
