"""Pipeline specs: TOML files that list built-in, declarative and Python rules."""

from ctxrules.spec.declarative import DeclarativeRule, parse_declarative
from ctxrules.spec.errors import Fault, Location, SpecError, SpecErrors
from ctxrules.spec.features import FEATURES, Feature
from ctxrules.spec.load import load_spec
from ctxrules.spec.predicates import OPERATORS, Predicate, parse_when
from ctxrules.spec.source import SpecSource, is_text
from ctxrules.spec.template import Template, TemplateProblem, parse_template

__all__ = [
    "FEATURES",
    "OPERATORS",
    "DeclarativeRule",
    "Fault",
    "Feature",
    "Location",
    "Predicate",
    "SpecError",
    "SpecErrors",
    "SpecSource",
    "Template",
    "TemplateProblem",
    "is_text",
    "load_spec",
    "parse_declarative",
    "parse_template",
    "parse_when",
]
