"""The laws every rule output is checked against, as data: one entry per predicate.

A new invariant plugs in by one entry in `RULE_LAWS`; `rule_laws_broken` evaluates every
law on every output, never a sample.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeAlias

import attrs

from ctxrules.check.attach import attached_once, no_block_expanded
from ctxrules.check.identity import (
    content_id_matches,
    folded_with_summary,
    identity_kept,
    pairing_kept,
    summaries_cover,
)
from ctxrules.check.invariants import (
    items_kept,
    locked_untouched,
    monotone_tightening,
    one_ruler,
    one_summary,
    protocol_valid,
)
from ctxrules.check.pins import pins_kept
from ctxrules.check.prefix import replaced_reported
from ctxrules.check.tightened import handles_named
from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit
from ctxrules.render import render_commit
from ctxrules.rules import Facts

#: A check between a rule's input and output, given the facts the rule saw.
StepCheck: TypeAlias = Callable[[ContextCommit, ContextCommit, Facts], list[Violation]]
#: A check of one commit on its own.
CommitCheck: TypeAlias = Callable[[ContextCommit, Facts], list[Violation]]


@attrs.frozen
class Law:
    """One predicate with the invariant it guards and a line for the summary.

    A ``step`` law compares input and output. A ``state`` law looks at one commit; only
    what it finds in the output and not in the input is the rule's fault.
    """

    invariant: int
    what: str
    step: StepCheck | None = None
    state: CommitCheck | None = None

    def broken(self, before: ContextCommit, after: ContextCommit, facts: Facts) -> list[Violation]:
        """What the rule that turned ``before`` into ``after`` broke of this law."""
        if self.step is not None:
            return self.step(before, after, facts)
        if self.state is None:
            return []
        found = self.state(after, facts)
        if not found:
            return found
        # Computed only when the output has a problem: most outputs are clean.
        already = set(self.state(before, facts))
        return [v for v in found if v not in already]


#: Every law a rule's output must keep, most specific first (the report leads with it).
RULE_LAWS: tuple[Law, ...] = (
    Law(6, "each source commit expanded once", state=lambda c, _f: attached_once(c)),
    Law(6, "no block expanded by a rule", step=lambda b, a, _f: no_block_expanded(b, a)),
    Law(12, "at most one active summary", state=lambda c, _f: one_summary(c)),
    Law(11, "tool call ids and names kept", step=lambda b, a, _f: pairing_kept(b, a)),
    Law(2, "the id recomputed from the content", step=lambda b, a, _f: content_id_matches(a, b)),
    Law(4, "locked items untouched", step=lambda b, a, _f: locked_untouched(b, a)),
    Law(17, "pinned items kept whole", step=lambda b, a, _f: pins_kept(b, a)),
    Law(3, "no item loosens or grows", step=lambda b, a, _f: monotone_tightening(b, a)),
    Law(13, "role, turn and times kept", step=lambda b, a, _f: identity_kept(b, a)),
    Law(10, "total_tokens is the rendered count", step=lambda _b, a, f: one_ruler(a, f.tokenizer)),
    Law(13, "folded items covered by the summary", state=lambda c, _f: summaries_cover(c)),
    Law(13, "folded into a summary written then", step=lambda b, a, _f: folded_with_summary(b, a)),
    Law(13, "the same items in the same order", step=lambda b, a, _f: items_kept(b, a)),
    # Laws about the items a rule changed (`ctxrules.check.tightened.changed_pairs`).
    Law(16, "tightened items name their handle", step=lambda b, a, _f: handles_named(b, a)),
    Law(15, "changes reported as replaced", step=lambda b, a, _f: replaced_reported(b, a)),
    Law(
        11,
        "every tool result with its call",
        state=lambda c, _f: protocol_valid(render_commit(c)),
    ),
)


def rule_laws_broken(
    before: ContextCommit,
    after: ContextCommit,
    facts: Facts,
    laws: Sequence[Law] = RULE_LAWS,
) -> list[Violation]:
    """Every violation of every law between a rule's input and its output."""
    found: list[Violation] = []
    for law in laws:
        found += law.broken(before, after, facts)
    return found
