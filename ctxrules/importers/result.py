"""What an import returns: the session, its figures, and the error value when it fails."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from pyrsistent import PMap, pmap

from ctxrules.dag import Session
from ctxrules.importers.formats import Format


def _counts(value: Mapping[str, int]) -> PMap[str, int]:
    return pmap(dict(value))


@attrs.frozen
class BadRecord:
    """A record that could not be read: where it is (``unit`` ``line``) and what was wrong.

    ``line`` is the line number in a JSON Lines file, or the 1-based position of the message
    in a JSON document's message list (``unit`` is then ``"message"``).

    >>> print(BadRecord(3, "invalid JSON at column 1: Expecting value"))
    line 3: invalid JSON at column 1: Expecting value
    """

    line: int
    reason: str
    unit: str = "line"

    @property
    def message(self) -> str:
        """``unit line: reason``."""
        return f"{self.unit} {self.line}: {self.reason}"

    def __str__(self) -> str:
        return self.message


@attrs.frozen
class ImportStats:
    """The figures of one import.

    ``records`` counts the records read (non-blank lines, or messages); ``skipped`` counts
    the records deliberately left out, by type; ``bad_records`` lists those that could
    not be read. ``unanswered_tool_calls`` counts tool nodes whose result never arrived.
    """

    records: int = 0
    nodes_by_role: PMap[str, int] = attrs.field(factory=pmap, converter=_counts)
    tool_calls: int = 0
    unanswered_tool_calls: int = 0
    skipped: PMap[str, int] = attrs.field(factory=pmap, converter=_counts)
    compactions: int = 0
    microcompactions: int = 0
    dangling_parents: int = 0
    bad_records: tuple[BadRecord, ...] = ()

    @property
    def nodes(self) -> int:
        """How many nodes the import produced."""
        return sum(self.nodes_by_role.values())


@attrs.frozen
class ImportResult:
    """An imported log: the session over the DAG, the format it was read as, and figures."""

    session: Session
    format: Format
    stats: ImportStats
    source: str = "<text>"


@attrs.frozen
class ImportFailure:
    """Why an import stopped: the source, where (``unit`` ``line``), what was wrong.

    ``partial`` holds what was read before the bad record, when anything was.

    >>> print(ImportFailure("s.jsonl", "expected a JSON object, found a list", line=4))
    s.jsonl: line 4: expected a JSON object, found a list
    >>> print(ImportFailure("s.jsonl", "empty input: nothing to import"))
    s.jsonl: empty input: nothing to import
    """

    source: str
    reason: str
    line: int | None = None
    unit: str = "line"
    partial: ImportResult | None = attrs.field(default=None, repr=False)

    @property
    def message(self) -> str:
        """``source: unit line: reason``, without the location when there is none."""
        where = f"{self.unit} {self.line}: " if self.line is not None else ""
        return f"{self.source}: {where}{self.reason}"

    def __str__(self) -> str:
        return self.message
