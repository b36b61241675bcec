"""Declarative rules: ``when`` an item passes every test, ``then`` tighten it to a state."""

from __future__ import annotations

from typing import Any

import attrs
from returns.result import Failure, Result, Success

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules.cap import CAPPED
from ctxrules.rules.facts import Facts
from ctxrules.rules.scan import scan
from ctxrules.rules.tighten import tighten
from ctxrules.spec.errors import Fault, Location, SpecError, describe, quoted, suggest
from ctxrules.spec.features import MATCHABLE_STATES
from ctxrules.spec.predicates import Predicate, normal_when, parse_when, states_matched
from ctxrules.spec.template import Template, parse_template

#: The states a declarative rule may move an item to.
TARGETS = ("aged", "cleared")
THEN_KEYS = ("state", "text")
#: Real states a rule may not target, with the reason the error gives.
_NOT_TARGETS: dict[str, tuple[str, Fault]] = {
    "summarized": (
        "summarized is reserved for compaction, which must create a summary covering the item",
        "reserved_state",
    ),
    "summary": ("summary items are made only by compaction", "reserved_state"),
    "full": ("a rule can only tighten an item", "loosens_state"),
}


@attrs.frozen
class DeclarativeRule:
    """A rule written in a spec: items passing every ``when`` test move to ``target``.

    One pass over the items; locked items, summaries, summarized items and items already
    at or past ``target`` are left alone; only changed items are replaced. The new text
    (``template`` rendered from the item) never costs more tokens than the old one. A
    result the cap cut on arrival is ``aged`` already, but only shortened: a rule with a
    ``text`` that targets ``aged`` still replaces its text, as the built-in aging does.
    """

    name: str
    when: tuple[Predicate, ...]
    target: State
    template: Template | None = None

    def __call__(self, commit: ContextCommit, facts: Facts) -> ContextCommit:
        """The commit with every matching item tightened (a `Rule`)."""
        changes: dict[int, ContextItem] = {}
        count = len(commit.items)
        for index, item in scan(commit, 0, facts):
            if not self._may_change(item):
                continue
            if all(test.holds(item, index, count, facts) for test in self.when):
                text = None if self.template is None else self.template.render(item)
                new = tighten(item, self.target, facts, rendered=text, reason=self.name)
                if new is not None and new != item and not _renames_a_cap(item, new):
                    changes[index] = new
        return commit.replace_items(changes)

    def _may_change(self, item: ContextItem) -> bool:
        if item.locked or item.state not in MATCHABLE_STATES:
            return False
        if item.state.tightness < self.target.tightness:
            return True
        # Capped on arrival: still the result's own head and tail, so a stub may replace it.
        return (
            self.template is not None
            and item.state is self.target is State.AGED
            and item.reason == CAPPED
        )


def _renames_a_cap(item: ContextItem, new: ContextItem) -> bool:
    # A capped result that keeps its text stays "capped", so the built-in aging still
    # stubs it later; a change of reason alone would hide it from that rule.
    return item.reason == CAPPED and new.state is item.state and new.rendered == item.rendered


def parse_declarative(
    entry: dict[str, Any], name: str, where: Location
) -> Result[tuple[DeclarativeRule, dict[str, object]], tuple[SpecError, ...]]:
    """The rule and its normalised form for hashing, or every fault in ``when`` and ``then``."""
    errors: list[SpecError] = []
    when: tuple[Predicate, ...] = ()
    if "when" not in entry:
        errors.append(where.key("when").error("a table of feature tests", "nothing", "missing"))
    else:
        parsed = parse_when(entry["when"], where.key("when"))
        if isinstance(parsed, Failure):
            errors.extend(parsed.failure())
        else:
            when = parsed.unwrap()
    then = _parse_then(entry.get("then"), "then" in entry, where.key("then"))
    if isinstance(then, Failure):
        errors.extend(then.failure())
        return Failure(tuple(errors))
    target, template = then.unwrap()
    tighter = _tighter_matches(when, target)
    if tighter:
        expected = f"a state no looser than any state 'when' can match ({quoted(tighter)})"
        errors.append(
            where.key("then").key("state").error(expected, repr(target.value), "loosens_state")
        )
    if errors:
        return Failure(tuple(errors))
    plain_then: dict[str, object] = {"state": target.value}
    if template is not None:
        plain_then["text"] = template.source
    plain: dict[str, object] = {"name": name, "when": normal_when(when), "then": plain_then}
    return Success((DeclarativeRule(name, when, target, template), plain))


def _tighter_matches(when: tuple[Predicate, ...], target: State) -> list[str]:
    # Without a state test the rule simply skips items at or past its target at run time;
    # a state test that admits a tighter state is an author's mistake, caught here.
    if not any(test.feature == "state" for test in when):
        return []
    matched = states_matched(when, tuple(s.value for s in MATCHABLE_STATES))
    return [s for s in matched if State(s).tightness > target.tightness]


def _parse_then(
    table: object, present: bool, where: Location
) -> Result[tuple[State, Template | None], tuple[SpecError, ...]]:
    if not present:
        return Failure((where.error("a table with a target 'state'", "nothing", "missing"),))
    if not isinstance(table, dict):
        return Failure(
            (where.error("a table with a target 'state'", describe(table), "wrong_type"),)
        )
    errors = [
        where.key(key).error(
            f"a key of 'then' (one of {quoted(THEN_KEYS)})",
            repr(key),
            "unknown_name",
            suggest(key, THEN_KEYS),
        )
        for key in table
        if key not in THEN_KEYS
    ]
    target = _parse_target(table, where.key("state"))
    if isinstance(target, SpecError):
        errors.append(target)
    template: Template | None = None
    if "text" in table:
        text = table["text"]
        if not isinstance(text, str):
            errors.append(
                where.key("text").error("a template string", describe(text), "wrong_type")
            )
        else:
            parsed = parse_template(text)
            if isinstance(parsed, Failure):
                problem = parsed.failure()
                errors.append(
                    where.key("text").error(
                        problem.expected, problem.found, "unsafe_template", problem.suggestion
                    )
                )
            else:
                template = parsed.unwrap()
    if errors or isinstance(target, SpecError):
        return Failure(tuple(errors))
    return Success((target, template))


def _parse_target(table: dict[str, Any], where: Location) -> State | SpecError:
    expected = f"a target state ({' or '.join(repr(t) for t in TARGETS)})"
    if "state" not in table:
        return where.error(expected, "nothing", "missing")
    value = table["state"]
    if not isinstance(value, str):
        return where.error(expected, describe(value), "wrong_type")
    if value in TARGETS:
        return State(value)
    if value in _NOT_TARGETS:
        why, fault = _NOT_TARGETS[value]
        return where.error(f"{expected}; {why}", repr(value), fault)
    return where.error(expected, repr(value), "unknown_name", suggest(value, TARGETS))
