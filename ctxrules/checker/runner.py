"""Search generated commits and sessions for a rule that breaks an invariant (``ctxrules check``)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence
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
from ctxrules.commit.item import copied_item
from ctxrules.commit.vector import ItemVector
from ctxrules.errors import USER_CODE_ERRORS
from ctxrules.rules import Facts, Rule
from ctxrules.testing.constants import rule_names
from ctxrules.testing.histories import commit_ruler, forget_histories, histories
from ctxrules.testing.ruler import RULER_NAMES, check_ruler
from ctxrules.testing.rules import facts_for

#: The invariants a rule can break, which `rule_violations` checks.
RULE_INVARIANTS = tuple(sorted({law.invariant for law in RULE_LAWS} | {8, 15}))
#: Runs of the test Hypothesis may make while shrinking one counterexample. A count of
#: work, not seconds: the same seed shrinks to the same counterexample on a busy machine as
#: on an idle one (a limit of 6 s gave other reports under load).
SHRINK_CALLS = 1_000
#: Reruns of a rule on the same small input (long inputs run once: reruns stay cheap).
RERUNS = 3
_LONG = 200

_FIELD_NAMES = tuple(a.name for a in attrs.fields(ContextItem))
_item_fields = operator.attrgetter(*_FIELD_NAMES)


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
                "no clock, randomness or I/O inside a rule (time arrives as Facts.now)",
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
    if not isinstance(after, ContextCommit):
        # Said as what it is, not as the AttributeError the laws would raise on it.
        raise TypeError(f"the rule returned {type(after).__name__}, expected a ContextCommit")
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
        after = _input_restored(before, snapshot, after)
        # Generated histories share their items; the rule has spoiled them for later checks.
        forget_histories()
        fixed_histories.cache_clear()
    return after, found + rule_laws_broken(before, after, facts)


def _input_restored(
    before: ContextCommit, snapshot: list[tuple[object, ...]], after: ContextCommit
) -> ContextCommit:
    """``after`` with copies of the items the rule wrote into; those items get their fields back.

    The report then shows the input as the rule received it beside the output as the rule
    left it (the same objects, before this, showed the written fields in both).
    """
    written = {
        id(item): fields
        for item, fields in zip(before.items, snapshot, strict=True)
        if _item_fields(item) != fields
    }
    kept = after.replace_items(
        {k: copied_item(item) for k, item in enumerate(after.items) if id(item) in written}
    )
    for item in before.items:
        fields = written.get(id(item))
        if fields is not None:
            for name, value in zip(_FIELD_NAMES, fields, strict=True):
                object.__setattr__(item, name, value)
    return kept


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
    # The items' digests are kept (a value's hash, not its identity), their rendering memos not.
    items = ItemVector.of(copied_item(item) for item in commit.items)
    return attrs.evolve(commit, items=items, digest=commit.digest)


class _Found(Exception):  # control flow inside the search, never escapes
    pass


#: One exception class per invariant, so the kinds of failure are told apart. Shrinking may
#: still slip to another kind with a smaller example; `_reported` chooses among those met.
_FOUND: dict[int, type[_Found]] = {n: type(f"Found{n}", (_Found,), {}) for n in range(1, 20)}
#: Impurity first, then the laws in `RULE_LAWS` order: "items kept" is the fallout of many defects.
_SPECIFICITY = (8, *dict.fromkeys(law.invariant for law in RULE_LAWS))


class WorkClock:
    """A clock that reads the test runs made so far, for Hypothesis's engine in place of `time`.

    The engine reads the clock for one decision alone, when to stop shrinking (past
    ``MAX_SHRINKING_SECONDS``, five minutes by default; the rest is statistics): read
    from this clock, that limit counts runs of the test, so what the engine does
    depends on the seed and the rule, never on how busy the machine is.
    """

    def __init__(self) -> None:
        self.runs = 0

    def tick(self) -> None:
        """One more run of the test."""
        self.runs += 1

    def perf_counter(self) -> float:
        """The runs so far, as the engine's seconds."""
        return float(self.runs)

    monotonic = perf_counter


@contextmanager
def _shrink_limit(calls: int, clock: WorkClock) -> Iterator[None]:
    # Hypothesis has no setting for this; its default (300 s of the wall clock) made checks
    # crawl, and any limit in seconds made the report depend on the machine's load.
    old_limit = getattr(hypothesis_engine, "MAX_SHRINKING_SECONDS", None)
    old_time = getattr(hypothesis_engine, "time", None)
    if old_limit is not None and old_time is not None:
        hypothesis_engine.MAX_SHRINKING_SECONDS = max(calls, 1)
        setattr(hypothesis_engine, "time", clock)  # noqa: B010 - not an exported name
    try:
        yield
    finally:
        if old_limit is not None and old_time is not None:
            hypothesis_engine.MAX_SHRINKING_SECONDS = old_limit
            setattr(hypothesis_engine, "time", old_time)  # noqa: B010


def _search(
    body: Callable[[st.DataObject], None],
    examples: int,
    seed: int | None,
    shrink_calls: int = SHRINK_CALLS,
) -> None:
    """Run ``body`` on ``examples`` generated examples; shrink a failure for ``shrink_calls`` runs."""
    clock = WorkClock()

    def counted(data: st.DataObject) -> None:
        clock.tick()
        body(data)

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
    test = config(given(st.data())(counted))
    if seed is not None:
        test = hypothesis_seed(seed)(test)
    with _shrink_limit(shrink_calls, clock):
        test()


#: One clean run kept for the hash-seed children: input, facts, output.
Run: TypeAlias = tuple[ContextCommit, Facts, ContextCommit]


@attrs.frozen
class Checked:
    """A rule to search, with how to rerun it (see `rule_violations`)."""

    name: str
    rule: Rule
    fresh: Fresh | None = None
    reruns: int = RERUNS


@attrs.frozen
class Outcome:
    """What the search found for one rule of `check_rules`.

    ``final`` is False when the search of several rules stopped short of this one's end
    (another rule broke a law first) or found its counterexample without shrinking it:
    `check_rule` on the rule alone gives the final answer then.
    """

    found: Counterexample | None
    final: bool = True


def check_rule(
    name: str,
    rule: Rule,
    *,
    examples: int,
    seed: int | None = None,
    samples: list[Run] | None = None,
    sample_size: int = 12,
    shrink_calls: int = SHRINK_CALLS,
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
    ``reruns`` (see `rule_violations`). Shrinking stops after ``shrink_calls`` runs of the rule's test.
    """
    (outcome,) = check_rules(
        [Checked(name, rule, fresh, reruns)],
        examples=examples,
        seed=seed,
        samples=None if samples is None else [samples],
        sample_size=sample_size,
        shrink_calls=shrink_calls,
    )
    return outcome.found


def check_rules(
    rules: Sequence[Checked],
    *,
    examples: int,
    seed: int | None = None,
    samples: Sequence[list[Run]] | None = None,
    sample_size: int = 12,
    shrink_calls: int = SHRINK_CALLS,
) -> list[Outcome]:
    """`check_rule` for rules that look for the same names, in one search: each input drawn once.

    Every rule meets every input it would meet on its own, in order, and only while no
    rule before it has broken a law: a rule after the first that breaks one ends the
    search for itself and every rule after it (`Outcome.final` is False: the earlier rules
    are reported first, or it is searched alone to shrink its counterexample); the first
    rule's counterexample is shrunk as `check_rule`'s. ``samples`` holds one list per rule.
    """
    names = rule_names(rules[0].rule)
    fixed = _fixed_runs(rules, fixed_histories(names), samples, sample_size // 2)
    room = [
        max(sample_size - len(samples[k]), 0) if samples is not None else 0
        for k in range(len(fixed))
    ]
    search = _Search(
        rules, histories(names=names, real=bundled_session_items(), rulers=RULER_NAMES), room
    )
    try:
        _search(search.body, examples, seed, shrink_calls)
    except (_Found, Flaky, BaseExceptionGroup):
        # A non-deterministic rule fails only sometimes and cannot be replayed: the failures
        # seen are still the answer. Of several kinds, the most specific law is reported.
        if not search.found:
            raise
        outcomes = [Outcome(None, final=False) for _ in rules]
        outcomes[search.active[0]] = Outcome(search.found[_reported(search.found)])
        return outcomes
    if samples is not None:
        for k in search.active:
            samples[k].extend(search.drawn[k])
    # A rule dropped without a counterexample of its own was never searched to the end.
    return [
        Outcome(search.unshrunk[k], final=False)
        if k in search.unshrunk
        else Outcome(fixed[k])
        if k in search.active
        else Outcome(None, final=False)
        for k in range(len(rules))
    ]


class _Search:
    """The state of one search of `check_rules`: the rules still searched and what they left."""

    def __init__(
        self, rules: Sequence[Checked], inputs: st.SearchStrategy[ContextCommit], room: list[int]
    ) -> None:
        self.rules, self.inputs, self.room = rules, inputs, room
        #: The rules still searched, in order; a rule is dropped with every rule after it.
        self.active = list(range(len(room)))
        #: Each rule's clean runs for the other processes: the first few as drawn, then the
        #: longest (a set-order defect may act only on a long history, and each long random
        #: history is another draw of the set orders; the fixed ones repeat their ids).
        self.drawn: list[list[Run]] = [[] for _ in rules]
        self.unshrunk: dict[int, Counterexample] = {}
        self.found: dict[type[_Found], Counterexample] = {}

    def broke(self, k: int, counterexample: Counterexample) -> None:
        """Rule ``k`` broke a law: drop it and the rules after it, or raise if it is the first."""
        if k != self.active[0]:
            self.unshrunk[k] = counterexample
            del self.active[self.active.index(k) :]
            return
        del self.active[1:]  # shrinking runs the first rule alone, as on its own
        # Hypothesis replays the shrunk example last, so the last one kept is the smallest.
        broken = counterexample.violations
        kind = _FOUND[broken[0].invariant] if broken else _Found
        self.found[kind] = counterexample
        raise kind

    def body(self, data: st.DataObject) -> None:
        """One example: an input drawn once, then each rule still searched on it."""
        before = data.draw(self.inputs, label="commit")
        facts = data.draw(facts_for(before, check_ruler(commit_ruler(before))), label="facts")
        split, earlier = 0, facts
        if len(before.items) >= 2 and data.draw(st.integers(0, 3), label="own output") == 0:
            split = data.draw(st.integers(1, len(before.items) - 1), label="items seen before")
            earlier = attrs.evolve(
                facts,
                now=max(facts.now - data.draw(st.floats(0, 7200), label="seconds"), 0.0),
                head_turn=max(facts.head_turn - data.draw(st.integers(0, 3), label="turns"), 0),
            )
        part = before.with_items(before.items[:split]) if split else before
        for k in tuple(self.active):
            given = before
            if split:
                # The rule's own output on the part seen before, the rest appended.
                seen, counterexample = _run_once(self.rules[k], part, earlier)
                if counterexample is not None:
                    self.broke(k, counterexample)
                    return
                given = seen.append_items(before.items[split:])
            after, counterexample = _run_once(self.rules[k], given, facts)
            if counterexample is not None:
                self.broke(k, counterexample)
                return
            if self.room[k] and len(given.items) >= 2 and _for_children(given):
                _keep_drawn(self.drawn[k], (given, facts, after), self.room[k])


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


def _run_once(
    checked: Checked, before: ContextCommit, facts: Facts
) -> tuple[ContextCommit, Counterexample | None]:
    """The rule's output on one input, and the counterexample it makes, if it makes one."""
    name, rule = checked.name, checked.rule
    try:
        after, violations = rule_violations(
            rule, before, facts, reruns=checked.reruns, fresh=checked.fresh
        )
    except USER_CODE_ERRORS as error:  # a user's rule may raise anything; we report it
        return before, Counterexample(
            name, (), before, None, facts, f"{type(error).__name__}: {error}"
        )
    if violations:
        return after, Counterexample(name, tuple(violations), before, after, facts)
    return after, None


def _fixed_runs(
    rules: Sequence[Checked],
    inputs: Sequence[ContextCommit],
    samples: Sequence[list[Run]] | None,
    keep: int,
) -> list[Counterexample | None]:
    """`_fixed_run` for each rule in turn, up to the first that breaks a law."""
    fixed: list[Counterexample | None] = []
    for k, checked in enumerate(rules):
        fixed.append(_fixed_run(checked, inputs, None if samples is None else samples[k], keep))
        if fixed[-1] is not None:
            break  # the rules after one that broke a law are never reported
    return fixed


def _fixed_run(
    checked: Checked,
    inputs: Sequence[ContextCommit],
    samples: list[Run] | None,
    keep: int,
) -> Counterexample | None:
    """The first counterexample among the fixed inputs, keeping up to ``keep`` clean runs."""
    for before in inputs:
        for late, facts in enumerate(fixed_facts(before)):
            after, counterexample = _run_once(checked, before, facts)
            if counterexample is not None:
                return counterexample
            # Long inputs go to the other processes too (the later facts only, the largest
            # left out for its cost): a set-order defect may need a long history.
            if (
                samples is not None
                and keep > 0
                and late
                and len(before.items) <= FIXED_SIZES[3]
                and _for_children(before)
            ):
                samples.append((before, facts, after))
                keep -= 1
    return None


def _for_children(before: ContextCommit) -> bool:
    """Whether a clean run on ``before`` may go to the hash-seed children.

    Not one counted by tiktoken: its table takes each child a quarter of its time to load,
    and the order a set or dict of strings yields does not follow the ruler.
    """
    return commit_ruler(before) == "heuristic"


def _rank(kind: type[_Found]) -> int:
    return _SPECIFICITY.index(_invariant(kind)) if _invariant(kind) in _SPECIFICITY else -1


def _invariant(kind: type[_Found]) -> int:
    return next((n for n, k in _FOUND.items() if k is kind), 0)


def _reported(found: dict[type[_Found], Counterexample]) -> type[_Found]:
    """The kind of failure to report: the most specific law that every failure found breaks.

    A law broken only on some of the failures is a special case of the defect, not the
    defect: a rule that drops the last item breaks 17 too when that item is pinned, and
    13 on every input, so 13 is reported. With no such law, the most specific one found.
    """
    common = [
        kind
        for kind in found
        if all(
            any(v.invariant == _invariant(kind) for v in counterexample.violations)
            for counterexample in found.values()
        )
    ]
    return min(common or found, key=_rank)


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error
