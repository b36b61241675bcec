"""Declared rule parameters, checked once when a pipeline is built."""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from typing import Literal

import attrs

#: The kinds of value a rule parameter can take.
ParamKind = Literal["int", "float", "str", "bool", "str_list"]


@attrs.frozen
class ParamProblem:
    """One thing wrong with a rule's parameters: which key, what was expected and found."""

    key: str
    expected: str
    found: str
    suggestion: str | None = None

    @property
    def message(self) -> str:
        """``key: expected …, found …`` plus a suggestion when there is one."""
        hint = f" (did you mean {self.suggestion!r}?)" if self.suggestion else ""
        return f"{self.key}: expected {self.expected}, found {self.found}{hint}"


@attrs.frozen
class Param:
    """One parameter of a built-in rule: its kind, default, inclusive bounds and meaning."""

    name: str
    kind: ParamKind
    default: object
    doc: str
    minimum: float | None = None
    maximum: float | None = None

    @property
    def expected(self) -> str:
        """What a valid value looks like, for error messages and docs."""
        kind = {
            "int": "an integer",
            "float": "a number",
            "str": "a string",
            "bool": "true or false",
            "str_list": "a list of strings",
        }[self.kind]
        if self.minimum is not None and self.maximum is not None:
            return f"{kind} in [{self.minimum:g}, {self.maximum:g}]"
        if self.minimum is not None:
            return f"{kind} >= {self.minimum:g}"
        if self.maximum is not None:
            return f"{kind} <= {self.maximum:g}"
        return kind

    def check(self, value: object) -> ParamProblem | None:
        """None if ``value`` is valid for this parameter, else the problem."""
        found = f"{value!r} ({type(value).__name__})"
        if not _has_kind(value, self.kind):
            return ParamProblem(self.name, self.expected, found)
        if self.kind in ("int", "float"):
            number = float(value)  # type: ignore[arg-type]  # _has_kind checked it is a number
            if not math.isfinite(number):
                return ParamProblem(self.name, f"a finite number: {self.expected}", repr(value))
            low, high = self.minimum, self.maximum
            if (low is not None and number < low) or (high is not None and number > high):
                return ParamProblem(self.name, self.expected, repr(value))
        return None


def _has_kind(value: object, kind: ParamKind) -> bool:
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "int":
        return isinstance(value, int)
    if kind == "float":
        return isinstance(value, int | float)
    if kind == "str":
        return isinstance(value, str)
    return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)


def check_params(
    params: tuple[Param, ...], given: Mapping[str, object]
) -> tuple[ParamProblem, ...]:
    """Every problem with ``given`` against ``params``: unknown names (with a suggestion) and bad values.

    >>> p = (Param("tail_turns", "int", 3, "turns kept whole", minimum=0),)
    >>> [x.message for x in check_params(p, {"tail_turn": 2, "tail_turns": -1})]
    ["tail_turn: expected a known parameter (one of ['tail_turns']), found 'tail_turn' (did you mean 'tail_turns'?)", 'tail_turns: expected an integer >= 0, found -1']
    """
    names = [p.name for p in params]
    problems: list[ParamProblem] = []
    for key in given:
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1)
            problems.append(
                ParamProblem(
                    key,
                    f"a known parameter (one of {names})",
                    repr(key),
                    close[0] if close else None,
                )
            )
    for param in params:
        if param.name in given:
            problem = param.check(given[param.name])
            if problem is not None:
                problems.append(problem)
    return tuple(problems)


def resolve(params: tuple[Param, ...], given: Mapping[str, object]) -> dict[str, object]:
    """Defaults overlaid with ``given``, lists as tuples; call after `check_params` found nothing."""
    values = {p.name: p.default for p in params}
    values.update(given)
    return {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
