"""Search generated commits and sessions for a rule that breaks an invariant (``ctxrules check``)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeAlias

import attrs
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.internal.conjecture import engine as hypothesis_engine

from ctxrules.check.laws import RULE_LAWS, rule_laws_broken
from ctxrules.check.violations import Violation
from ctxrules.checker.fixed import FIXED_SIZES, bundled_session_items, fixed_facts, fixed_histories
from ctxrules.checker.purity import module_state, run_trapped, state_changes
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.commit.vector import ItemVector
from ctxrules.rules import Facts, Rule
from ctxrules.testing.constants import rule_names
from ctxrules.testing.histories import commit_ruler, forget_histories, histories
from ctxrules.testing.ruler import RULER_NAMES, check_ruler
from ctxrules.testing.rules import facts_for

#: The invariants a rule can break, which `rule_violations` checks.
RULE_INVARIANTS = tuple(sorted({law.invariant for law in RULE_LAWS} | {8, 15}))
#: Seconds Hypothesis may spend shrinking one counterexample (its own limit is five minutes).
SHRINK_SECONDS = 6
#: Reruns of a rule on the same small input (long inputs run once: reruns stay cheap).
RERUNS = 3
_LONG = 200

_item_fields = operator.attrgetter(*(a.name for a in attrs.fields(ContextItem)))
#: The fields an item is built from, in the order its ``__init__`` takes them.
_init_fields = operator.attrgetter(*(a.name for a in attrs.fields(ContextItem) if a.init))


@attrs.frozen
class Counterexample:
    """The smallest input found on which ``rule`` breaks something, and what it broke."""

    rule: str
    violations: tuple[Violation, ...]
    before: ContextCommit
    after: ContextCommit | None
    facts: Facts
    error: str | None = None
    #: What the rule returned for the same input elsewhere (another process), if that differed.
    other: ContextCommit | None = None


def _impure(calls: list[str], written: list[str], differing: int | None) -> list[Violation]:
    found: list[Violation] = []
    if calls:
        found.append(
            Violation(
                8,
                (),
                "no clock or randomness inside a rule (time arrives as Facts.now)",
                "a call to " + ", ".join(calls),
            )
        )
    if written:
        found.append(
            Violation(
                8, (), "no write to module state between calls", "a write to " + ", ".join(written)
            )
        )
    if differing is not None:
        found.append(
            Violation(
                8,
                (),
                "the same output for the same input",
                f"a different output on run {differing + 1}",
            )
        )
    return found


#: Makes a new instance of the rule under check (its factory called again), for reruns.
Fresh: TypeAlias = Callable[[], Rule]


def rule_violations(
    rule: Rule,
    before: ContextCommit,
    facts: Facts,
    *,
    reruns: int = RERUNS,
    fresh: Fresh | None = None,
) -> tuple[ContextCommit, list[Violation]]:
    """Run ``rule`` on ``before`` with the clock trapped, then again; every law it broke.

    Every law of `RULE_LAWS` is evaluated on the output. Invariant 8: a clock, random, file
    or process call, a write to the rule's module globals, closure, default arguments or
    fields, an output that differs on a rerun, or an input modified in place. With
    ``fresh``, the second rerun is made by a new instance of the rule, so a memo the
    instance keeps (by the commit's id, say) cannot answer for it.
    """
    snapshot = [_item_fields(item) for item in before.items]
    state = module_state(rule)
    after, calls = run_trapped(lambda: rule(before, facts), rule)
    written = state_changes(state, module_state(rule))
    # A long input is rerun once: a defect that needs a long history may be rare too.
    runs = reruns if len(before.items) <= _LONG else min(reruns, 1)
    differing = next(
        (n for n in range(1, runs + 1) if _rerun(rule, fresh, n, runs, before, facts) != after),
        None,
    )
    found = _impure(calls, written, differing)
    if [_item_fields(item) for item in before.items] != snapshot:
        found.append(Violation(8, (), "the input commit unmodified", "a modified input"))
        # Generated histories share their items; the rule has spoiled them for later checks.
        forget_histories()
    return after, found + rule_laws_broken(before, after, facts)


def _rerun(  # noqa: PLR0917 - private; called once, positionally
    rule: Rule, fresh: Fresh | None, n: int, runs: int, before: ContextCommit, facts: Facts
) -> ContextCommit:
    """Rerun ``n`` of ``runs``: odd ones on an equal copy of the input, one by a fresh instance.

    A rule reading object addresses, or keeping a memo by identity, answers differently for
    an equal copy; the second rerun (the only one, for a long input) is made by a new
    instance when there is a factory.
    """
    subject = fresh() if fresh is not None and n == min(2, runs) else rule
    return subject(_copy(before) if n % 2 else before, facts)


def _copy(commit: ContextCommit) -> ContextCommit:
    """An equal commit made of new objects (the commit and each item), marks and digest kept."""
    # Built from the fields in order, as attrs.evolve would (half its cost): no digest or memo kept.
    items = ItemVector.of(ContextItem(*_init_fields(item)) for item in commit.items)
    return attrs.evolve(commit, items=items, digest=commit.digest)


class _Found(Exception):  # control flow inside the search, never escapes
    pass


#: One exception class per invariant, so Hypothesis shrinks each kind of failure on its own
#: and never trades the invariant found for another while shrinking.
_FOUND: dict[int, type[_Found]] = {n: type(f"Found{n}", (_Found,), {}) for n in range(1, 20)}
#: Impurity first, then the laws in `RULE_LAWS` order: "items kept" is the fallout of many defects.
_SPECIFICITY = (8, *dict.fromkeys(law.invariant for law in RULE_LAWS))


@contextmanager
def _shrink_limit(seconds: int) -> Iterator[None]:
    # Hypothesis has no setting for this; its default (300 s) is what made checks crawl.
    old = getattr(hypothesis_engine, "MAX_SHRINKING_SECONDS", None)
    if old is not None:
        hypothesis_engine.MAX_SHRINKING_SECONDS = max(seconds, 1)
    try:
        yield
    finally:
        if old is not None:
            hypothesis_engine.MAX_SHRINKING_SECONDS = old


def _search(
    body: Callable[[st.DataObject], None],
    examples: int,
    seed: int | None,
    shrink_seconds: int = SHRINK_SECONDS,
) -> None:
    config = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=seed is None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        # No explain phase: it re-runs the shrunk example many times to annotate a report
        # this command never prints (half the time of a short search that finds something).
        phases=tuple(p for p in Phase if p is not Phase.explain),
    )
    test = config(given(st.data())(body))
    if seed is not None:
        test = hypothesis_seed(seed)(test)
    with _shrink_limit(shrink_seconds):
        test()


def check_rule(
    name: str,
    rule: Rule,
    *,
    examples: int,
    seed: int | None = None,
    samples: list[tuple[ContextCommit, Facts, ContextCommit]] | None = None,
    sample_size: int = 12,
    shrink_seconds: int = SHRINK_SECONDS,
    fresh: Fresh | None = None,
    reruns: int = RERUNS,
) -> Counterexample | None:
    """The shrunk counterexample on generated commits of every size, or None if none was found.

    The rule first meets fixed inputs (`fixed_histories`: long histories, sizes around the
    item vector's chunks, one counted by tiktoken, the real session, the tool names it
    holds), then the random search, whose histories use those names too, are counted by
    either ruler, and one time in four are the rule's own output on an earlier part of the
    history with the rest appended (as the next turn hands it back).
    The search's counterexample, being shrunk, is reported when both find one.
    ``samples``, if given, collects up to ``sample_size`` clean runs of the rule (input,
    facts, output) for `ctxrules.checker.hashseed`, up to half of them from the fixed inputs.
    ``fresh`` makes a new instance of the rule for reruns, of which a small input gets
    ``reruns`` (see `rule_violations`). Shrinking stops after ``shrink_seconds``.
    """
    names = rule_names(rule)
    fixed = _fixed_run(name, rule, names, samples, sample_size // 2, fresh, reruns)
    # The search's clean runs for the other processes: the first few as drawn, then the
    # longest (a set-order defect may act only on a long history, and each long random
    # history is another draw of the set orders; the fixed ones repeat their ids).
    drawn: list[tuple[ContextCommit, Facts, ContextCommit]] = []
    room = max(sample_size - len(samples), 0) if samples is not None else 0
    found: dict[type[_Found], Counterexample] = {}
    real = bundled_session_items()

    def keep(counterexample: Counterexample) -> None:
        # Hypothesis replays the shrunk example last, so the last one kept is the smallest.
        broken = counterexample.violations
        kind = _FOUND[broken[0].invariant] if broken else _Found
        found[kind] = counterexample
        raise kind

    # Built once: a strategy built anew is validated anew at every draw.
    inputs = histories(names=names, real=real, rulers=RULER_NAMES)

    def body(data: st.DataObject) -> None:
        before = data.draw(inputs, label="commit")
        facts = data.draw(facts_for(before, check_ruler(commit_ruler(before))), label="facts")
        if len(before.items) >= 2 and data.draw(st.integers(0, 3), label="own output") == 0:
            split = data.draw(st.integers(1, len(before.items) - 1), label="items seen before")
            earlier = attrs.evolve(
                facts,
                now=max(facts.now - data.draw(st.floats(0, 7200), label="seconds"), 0.0),
                head_turn=max(facts.head_turn - data.draw(st.integers(0, 3), label="turns"), 0),
            )
            seen, counterexample = _run_once(
                name, rule, before.with_items(before.items[:split]), earlier, fresh, reruns
            )
            if counterexample is not None:
                keep(counterexample)
            before = seen.append_items(before.items[split:])
        after, counterexample = _run_once(name, rule, before, facts, fresh, reruns)
        if counterexample is not None:
            keep(counterexample)
        if room and len(before.items) >= 2:
            _keep_drawn(drawn, (before, facts, after), room)

    try:
        _search(body, examples, seed, shrink_seconds)
        if samples is not None:
            samples.extend(drawn)
    except (_Found, Flaky, BaseExceptionGroup):
        # A non-deterministic rule fails only sometimes and cannot be replayed: the failures
        # seen are still the answer. Of several kinds, the most specific law is reported.
        if not found:
            raise
        return found[min(found, key=_rank)]
    return fixed


def _keep_drawn(
    drawn: list[tuple[ContextCommit, Facts, ContextCommit]],
    run: tuple[ContextCommit, Facts, ContextCommit],
    room: int,
) -> None:
    """Keep ``run`` among at most ``room``: the first quarter as drawn, then the longest."""
    if len(drawn) < room:
        drawn.append(run)
        return
    first = room // 4
    shortest = min(range(first, room), key=lambda k: len(drawn[k][0].items), default=None)
    if shortest is not None and len(run[0].items) > len(drawn[shortest][0].items):
        drawn[shortest] = run


def _run_once(  # noqa: PLR0917 - private; the search's arguments, passed on
    name: str,
    rule: Rule,
    before: ContextCommit,
    facts: Facts,
    fresh: Fresh | None = None,
    reruns: int = RERUNS,
) -> tuple[ContextCommit, Counterexample | None]:
    """The rule's output on one input, and the counterexample it makes, if it makes one."""
    try:
        after, violations = rule_violations(rule, before, facts, reruns=reruns, fresh=fresh)
    except Exception as error:  # noqa: BLE001 - a user's rule may raise anything; we report it
        return before, Counterexample(
            name, (), before, None, facts, f"{type(error).__name__}: {error}"
        )
    if violations:
        return after, Counterexample(name, tuple(violations), before, after, facts)
    return after, None


def _fixed_run(  # noqa: PLR0917 - private; called once, positionally, above
    name: str,
    rule: Rule,
    names: tuple[str, ...],
    samples: list[tuple[ContextCommit, Facts, ContextCommit]] | None,
    keep: int,
    fresh: Fresh | None,
    reruns: int,
) -> Counterexample | None:
    """The first counterexample among the fixed inputs, keeping up to ``keep`` clean runs."""
    for before in fixed_histories(names):
        for late, facts in enumerate(fixed_facts(before)):
            after, counterexample = _run_once(name, rule, before, facts, fresh, reruns)
            if counterexample is not None:
                return counterexample
            # Long inputs go to the other processes too (the later facts only, the largest
            # left out for its cost): a set-order defect may need a long history.
            if samples is not None and keep > 0 and late and len(before.items) <= FIXED_SIZES[3]:
                samples.append((before, facts, after))
                keep -= 1
    return None


def _rank(kind: type[_Found]) -> int:
    invariant = next((n for n, k in _FOUND.items() if k is kind), 0)
    return _SPECIFICITY.index(invariant) if invariant in _SPECIFICITY else -1


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error
