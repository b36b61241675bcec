"""The registry of built-in rules: every `BuiltinRule` of the catalog, by name."""

from __future__ import annotations

from pyrsistent import PMap, pmap

from ctxrules.rules.builtin import BuiltinRule
from ctxrules.rules.catalog import BUILTIN_RULES

__all__ = ["BuiltinRule", "builtins"]

_BY_NAME: PMap[str, BuiltinRule] = pmap({rule.name: rule for rule in BUILTIN_RULES})


def builtins() -> PMap[str, BuiltinRule]:
    """Every built-in rule by name."""
    return _BY_NAME
