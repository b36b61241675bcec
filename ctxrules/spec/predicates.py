"""``when``: predicates over item features, type-checked once when a spec loads."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import attrs
from returns.result import Failure, Result, Success

from ctxrules.commit import ContextItem
from ctxrules.rules.facts import Facts
from ctxrules.spec.errors import Location, SpecError, describe, quoted, suggest
from ctxrules.spec.features import FEATURE_NAMES, FEATURES, Feature, FeatureKind
from ctxrules.spec.pattern import Pattern, compile_pattern

# Operands are type-checked against the feature at load, so these compare like with like.
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}

#: Every operator, in the order the docs list them.
OPERATORS = ("eq", "ne", "in", "not_in", "lt", "le", "gt", "ge", "matches")

#: The operators that make sense for each kind of feature.
OPERATORS_FOR: dict[FeatureKind, tuple[str, ...]] = {
    "str": ("eq", "ne", "in", "not_in", "matches"),
    "int": ("eq", "ne", "in", "not_in", "lt", "le", "gt", "ge"),
    "float": ("eq", "ne", "in", "not_in", "lt", "le", "gt", "ge"),
    "bool": ("eq", "ne", "in", "not_in"),
}

_KIND_WORDS: dict[FeatureKind, str] = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean",
}


@attrs.frozen
class Predicate:
    """One test ``feature op operand``; a ``matches`` pattern is compiled once, when built.

    Build predicates with `parse_when`, which checks the operand first.

    >>> Predicate("tokens", "gt", 2000)
    Predicate(feature='tokens', op='gt', operand=2000)
    >>> Predicate("tool_name", "matches", "^gr").test("grep")
    True
    """

    feature: str
    op: str
    operand: object
    pattern: Pattern | None = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        compiled = (
            compile_pattern(self.operand)
            if self.op == "matches" and isinstance(self.operand, str)
            else None
        )
        object.__setattr__(self, "pattern", None if isinstance(compiled, str) else compiled)

    def test(self, value: object) -> bool:
        """Whether a feature value passes; an absent value (a non-tool's tool_name) passes only ``ne``/``not_in``."""
        if self.op == "matches":
            return (
                isinstance(value, str)
                and self.pattern is not None
                and self.pattern.search(value) is not None
            )
        if self.op in ("in", "not_in"):
            found = value in self.operand  # type: ignore[operator]  # checked to be a tuple at load
            return found if self.op == "in" else not found
        if value is None:
            return self.op == "ne"
        return _COMPARE[self.op](value, self.operand)

    def holds(self, item: ContextItem, position: int, count: int, facts: Facts) -> bool:
        """Whether the item at ``position`` of ``count`` items passes this test."""
        return self.test(FEATURES[self.feature].extract(item, position, count, facts))


def parse_when(
    table: object, where: Location
) -> Result[tuple[Predicate, ...], tuple[SpecError, ...]]:
    """The predicates of a ``when`` table, or every fault in it.

    A bare value means ``eq``; a table maps operators to operands.

    >>> parse_when({"role": "tool", "tokens": {"gt": 2000}}, Location("<string>", "when")).unwrap()
    (Predicate(feature='role', op='eq', operand='tool'), Predicate(feature='tokens', op='gt', operand=2000))
    >>> print(parse_when({"turn_age": {"ge": "six"}}, Location("<string>", "when")).failure()[0])
    <string>: when.turn_age: expected an integer operand for 'ge', found 'six' (str)
    """
    if not isinstance(table, dict):
        return Failure((where.error("a table of feature tests", describe(table), "wrong_type"),))
    predicates: list[Predicate] = []
    errors: list[SpecError] = []
    for name, spec in table.items():
        at = where.key(name)
        feature = FEATURES.get(name)
        if feature is None:
            expected = f"a known feature (one of {quoted(FEATURE_NAMES)})"
            hint = suggest(name, FEATURE_NAMES)
            errors.append(at.error(expected, repr(name), "unknown_name", hint))
            continue
        tests = spec if isinstance(spec, dict) else {"eq": spec}
        if not tests:
            errors.append(at.error("at least one operator", "an empty table", "missing"))
        for op, operand in tests.items():
            result = _predicate(
                feature,
                op,
                operand,
                at,
                bare=not isinstance(spec, dict),
            )
            if isinstance(result, Failure):
                errors.extend(result.failure())
            else:
                predicates.append(result.unwrap())
    return Failure(tuple(errors)) if errors else Success(tuple(predicates))


def _predicate(
    feature: Feature, op: str, operand: object, at: Location, *, bare: bool
) -> Result[Predicate, tuple[SpecError, ...]]:
    wrong_operator = _operator_problem(feature, op, at)
    if wrong_operator is not None:
        return Failure((wrong_operator,))
    if op in ("in", "not_in"):
        return _set_predicate(feature, op, operand, at)
    if op == "matches":
        return _pattern_predicate(feature, operand, at)
    if bare and isinstance(operand, list):
        expected = f"{_KIND_WORDS[feature.kind]} operand for 'eq' (write {{ in = [...] }} to match any of a list)"
        return Failure((at.error(expected, describe(operand), "wrong_type"),))
    problem = _check_operand(feature, op, operand, at)
    if problem is not None:
        return Failure((problem,))
    return Success(Predicate(feature.name, op, _normal(feature, operand)))


def _operator_problem(feature: Feature, op: str, at: Location) -> SpecError | None:
    allowed = OPERATORS_FOR[feature.kind]
    if op in allowed:
        return None
    article = "an" if feature.kind == "int" else "a"
    expected = f"an operator for {article} {feature.kind} feature (one of {quoted(allowed)})"
    if op in OPERATORS:
        return at.error(expected, repr(op), "wrong_type")
    return at.error(expected, repr(op), "unknown_name", suggest(op, allowed))


def _set_predicate(
    feature: Feature, op: str, operand: object, at: Location
) -> Result[Predicate, tuple[SpecError, ...]]:
    if not isinstance(operand, list):
        return Failure(
            (at.error(f"an array of operands for {op!r}", describe(operand), "wrong_type"),)
        )
    problems = [_check_operand(feature, op, element, at) for i, element in enumerate(operand)]
    errors = tuple(problem for problem in problems if problem is not None)
    if errors:
        return Failure(errors)
    return Success(Predicate(feature.name, op, tuple(_normal(feature, e) for e in operand)))


def _pattern_predicate(
    feature: Feature, operand: object, at: Location
) -> Result[Predicate, tuple[SpecError, ...]]:
    if not isinstance(operand, str):
        expected = "a regular expression string for 'matches'"
        return Failure((at.error(expected, describe(operand), "wrong_type"),))
    compiled = compile_pattern(operand)
    if isinstance(compiled, str):
        found = f"{operand!r} ({compiled})"
        return Failure((at.error("a valid regular expression for 'matches'", found, "wrong_type"),))
    return Success(Predicate(feature.name, "matches", operand))


def _check_operand(feature: Feature, op: str, operand: object, at: Location) -> SpecError | None:
    expected = f"{_KIND_WORDS[feature.kind]} operand for {op!r}"
    if not _has_kind(operand, feature.kind):
        return at.error(expected, describe(operand), "wrong_type")
    if isinstance(operand, float) and math.isnan(operand):
        return at.error(f"{expected} (not nan)", "nan", "wrong_type")
    if feature.choices and operand not in feature.choices:
        choices = f"one of {quoted(feature.choices)}"
        return at.error(
            f"a {feature.name} ({choices})",
            repr(operand),
            "unknown_name",
            suggest(str(operand), feature.choices),
        )
    return None


def _has_kind(value: object, kind: FeatureKind) -> bool:
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "int":
        return isinstance(value, int)
    if kind == "float":
        return isinstance(value, int | float)
    return isinstance(value, str)


def _normal(feature: Feature, operand: object) -> object:
    # 60 and 60.0 are one threshold, so they must normalise (and hash) alike.
    return float(operand) if feature.kind == "float" else operand  # type: ignore[arg-type]


def normal_when(predicates: tuple[Predicate, ...]) -> dict[str, dict[str, object]]:
    """The predicates as plain data for hashing: features and operators sorted, sets sorted."""
    plain: dict[str, dict[str, object]] = {}
    for predicate in predicates:
        operand = predicate.operand
        if isinstance(operand, tuple):
            operand = sorted(set(operand), key=repr)
        plain.setdefault(predicate.feature, {})[predicate.op] = operand
    return plain


def states_matched(predicates: tuple[Predicate, ...], states: tuple[str, ...]) -> tuple[str, ...]:
    """The states (by value) that pass every ``state`` test among the predicates."""
    tests = [p for p in predicates if p.feature == "state"]
    return tuple(s for s in states if all(p.test(s) for p in tests))
