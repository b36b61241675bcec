"""The invariants of DESIGN.md as predicates returning violations; shared with the tests."""

from ctxrules.check.attach import attached_once, attached_traceable, multi_parent_from_merge
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
    "attached_once",
    "attached_traceable",
    "items_kept",
    "locked_untouched",
    "monotone_tightening",
    "multi_parent_from_merge",
    "one_ruler",
    "one_summary",
    "protocol_valid",
    "rule_step",
]
