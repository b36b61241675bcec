"""Python rules: ``use = "package.module:factory"``, imported only when the caller allows it."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any, cast

from returns.result import Failure, Result, Success

from ctxrules.errors import USER_CODE_ERRORS
from ctxrules.rules.pipeline import Rule
from ctxrules.rules.text import head, one_line
from ctxrules.spec.errors import Location, SpecError, describe, suggest

_REFERENCE = re.compile(
    r"(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):(?P<factory>[A-Za-z_]\w*)", re.ASCII
)


def is_python_reference(use: str) -> bool:
    """Whether a ``use`` value names Python code (it has a ``:``) rather than a built-in.

    >>> is_python_reference("mypkg.rules:make_rule"), is_python_reference("clear_idle")
    (True, False)
    """
    return ":" in use


def frozen_params(value: Any) -> Any:  # noqa: ANN401 - TOML values of any shape
    """TOML parameter values with every array turned into a tuple, so a rule cannot mutate them."""
    if isinstance(value, list):
        return tuple(frozen_params(v) for v in value)
    if isinstance(value, dict):
        return {k: frozen_params(v) for k, v in value.items()}
    return value


def load_python_rule(
    use: str, params: dict[str, Any], where: Location, *, allow_imports: bool
) -> Result[Rule, SpecError]:
    """``factory(**params)`` from the named module, or why it could not be had; never raises.

    >>> print(load_python_rule("mypkg.rules:make_rule", {}, Location("<string>", "rules[0]"), allow_imports=False).failure())
    <string>: rules[0].use: expected a built-in rule name (loading 'mypkg.rules:make_rule' imports Python code: pass allow_imports=True, or --allow-imports on the command line), found 'mypkg.rules:make_rule'
    """
    at = where.key("use")
    match = _REFERENCE.fullmatch(use)
    if match is None:
        return Failure(
            at.error("a Python rule reference 'package.module:factory'", repr(use), "wrong_type")
        )
    if not allow_imports:
        expected = f"a built-in rule name (loading {use!r} imports Python code: pass allow_imports=True, or --allow-imports on the command line)"
        return Failure(at.error(expected, repr(use), "imports_refused"))
    factory = _import_factory(match.group("module"), match.group("factory"), at)
    if isinstance(factory, SpecError):
        return Failure(factory)
    try:
        rule = factory(**frozen_params(params))
    except USER_CODE_ERRORS as error:  # any failure of user code becomes a SpecError
        expected = f"{use!r} to build a rule from its params"
        return Failure(at.error(expected, f"an exception ({_explain(error)})", "import_failed"))
    if not callable(rule):
        return Failure(
            at.error(f"{use!r} to return a callable Rule", describe(rule), "import_failed")
        )
    return Success(rule)


def _import_factory(
    module_name: str, factory_name: str, at: Location
) -> Callable[..., object] | SpecError:
    try:
        module = importlib.import_module(module_name)
    except USER_CODE_ERRORS as error:  # see load_python_rule
        return at.error(
            "an importable module", f"{module_name!r} ({_explain(error)})", "import_failed"
        )
    try:
        factory = getattr(module, factory_name)
    except USER_CODE_ERRORS:  # a module __getattr__ may raise anything
        names = [n for n in dir(module) if not n.startswith("_")]
        expected = f"a factory defined in module {module_name!r}"
        return at.error(expected, repr(factory_name), "import_failed", suggest(factory_name, names))
    if not callable(factory):
        return at.error("a callable factory", describe(factory), "import_failed")
    return cast("Callable[..., object]", factory)


def _explain(error: BaseException) -> str:
    text = one_line(str(error))
    return f"{type(error).__name__}: {head(text, 160)}" if text else type(error).__name__
