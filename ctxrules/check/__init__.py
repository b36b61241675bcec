"""The invariants of DESIGN.md as predicates returning violations; shared with the tests."""

from ctxrules.check.attach import attached_once, attached_traceable, multi_parent_from_merge
from ctxrules.check.compaction import (
    compaction_step,
    honest_outcome,
    kept_in_order,
    nothing_lost,
    summaries_outside_dag,
)
from ctxrules.check.history import append_only, checkout_pure, content_addressed, render_pure
from ctxrules.check.invariants import (
    items_kept,
    locked_untouched,
    monotone_tightening,
    one_ruler,
    one_summary,
    protocol_valid,
    rule_step,
)
from ctxrules.check.pins import pins_kept, pins_sent
from ctxrules.check.prefix import extends, prefix_stable
from ctxrules.check.recoverable import recoverable
from ctxrules.check.violations import INVARIANT_NAMES, Violation

__all__ = [
    "INVARIANT_NAMES",
    "Violation",
    "append_only",
    "attached_once",
    "attached_traceable",
    "checkout_pure",
    "compaction_step",
    "content_addressed",
    "extends",
    "honest_outcome",
    "items_kept",
    "kept_in_order",
    "locked_untouched",
    "monotone_tightening",
    "multi_parent_from_merge",
    "nothing_lost",
    "one_ruler",
    "one_summary",
    "pins_kept",
    "pins_sent",
    "prefix_stable",
    "protocol_valid",
    "recoverable",
    "render_pure",
    "rule_step",
    "summaries_outside_dag",
]
