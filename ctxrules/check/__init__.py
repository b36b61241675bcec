"""The invariants of DESIGN.md as predicates returning violations; shared with the tests."""

from ctxrules.check.invariants import (
    items_kept,
    locked_untouched,
    monotone_tightening,
    one_ruler,
    one_summary,
    protocol_valid,
    rule_step,
)
from ctxrules.check.violations import INVARIANT_NAMES, Violation

__all__ = [
    "INVARIANT_NAMES",
    "Violation",
    "items_kept",
    "locked_untouched",
    "monotone_tightening",
    "one_ruler",
    "one_summary",
    "protocol_valid",
    "rule_step",
]
