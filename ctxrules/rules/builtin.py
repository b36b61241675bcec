"""A built-in rule's description: name, parameters, factory, and the laws it declares."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs
from returns.result import Failure, Result, Success

from ctxrules.rules.params import Param, ParamProblem, check_params, resolve
from ctxrules.rules.pipeline import Rule


@attrs.frozen
class BuiltinRule:
    """A built-in rule: its parameters are checked once, then ``factory`` returns the pure rule.

    ``idempotent`` declares that running the rule twice on its own output changes nothing,
    which the law suite then checks.
    """

    name: str
    doc: str
    params: tuple[Param, ...]
    factory: Callable[..., Rule]
    idempotent: bool = True

    def build(
        self, given: Mapping[str, object] | None = None
    ) -> Result[Rule, tuple[ParamProblem, ...]]:
        """The rule for these parameters (defaults for the rest), or every problem with them."""
        problems = check_params(self.params, given or {})
        if problems:
            return Failure(problems)
        return Success(self.factory(**resolve(self.params, given or {})))

    def defaults(self) -> dict[str, object]:
        """Every parameter's default."""
        return resolve(self.params, {})
