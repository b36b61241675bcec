"""`Violation`: one broken invariant, as a value with the ids involved."""

from __future__ import annotations

import attrs

#: The invariants of DESIGN.md by number.
INVARIANT_NAMES = {
    1: "DAG append-only",
    2: "commits immutable and content-addressed",
    3: "monotone tightening",
    4: "locked items untouched",
    5: "summary items only in commits",
    6: "attach expanded once",
    7: "multi-parent commits only from merge",
    8: "pure rendering and rules",
    9: "checkout appends nothing",
    10: "one ruler",
    11: "protocol validity",
    12: "at most one active summary",
    13: "nothing lost",
    14: "honest compaction",
    15: "prefix stability",
    16: "recoverability",
    17: "pins kept whole",
}


@attrs.frozen
class Violation:
    """What broke: the invariant's number, the ids involved, what was expected and found."""

    invariant: int
    ids: tuple[str, ...]
    expected: str
    found: str

    @property
    def name(self) -> str:
        """The invariant's short name."""
        return INVARIANT_NAMES[self.invariant]

    @property
    def message(self) -> str:
        """One line: ``invariant 3 (monotone tightening) at n1: expected …, found …``."""
        where = f" at {', '.join(self.ids)}" if self.ids else ""
        return f"invariant {self.invariant} ({self.name}){where}: expected {self.expected}, found {self.found}"

    def __str__(self) -> str:
        return self.message
