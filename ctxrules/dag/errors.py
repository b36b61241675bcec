"""Errors of the DAG layer: values that name the fault and carry the offending ids."""

from __future__ import annotations

import attrs

from ctxrules.errors import ErrorValue


@attrs.frozen
class DagError(ErrorValue):
    """Base of every DAG failure; ``message`` is the human-readable text."""


@attrs.frozen
class DuplicateNode(DagError):
    """A node with this id is already in the graph."""

    node_id: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"duplicate node id {self.node_id!r}: the graph is append-only"


@attrs.frozen
class UnknownNode(DagError):
    """An operation named a node id the graph does not hold."""

    node_id: str
    field: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"unknown node {self.node_id!r} given as {self.field}"


@attrs.frozen
class ConflictingEdges(DagError):
    """A node named both a predecessor and a caller; it may have at most one."""

    node_id: str
    predecessor: str
    caller: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return (
            f"node {self.node_id!r} has both predecessor={self.predecessor!r} and "
            f"caller={self.caller!r}; set at most one"
        )


@attrs.frozen
class UnknownReads(DagError):
    """A node's ``reads`` named nodes the graph does not hold."""

    node_id: str
    missing: tuple[str, ...]

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"node {self.node_id!r} reads unknown nodes {list(self.missing)!r}"


@attrs.frozen
class NotRunning(DagError):
    """``complete`` was asked of a node that is not running (done, error or completed)."""

    node_id: str
    status: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return (
            f"cannot complete node {self.node_id!r}: its status is {self.status!r}, "
            "only a 'running' node is completed, exactly once"
        )


@attrs.frozen
class SessionBusy(DagError):
    """A retry or edit was asked while nodes are still running."""

    operation: str
    running: tuple[str, ...]

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return (
            f"cannot {self.operation} while nodes are running: {list(self.running)!r}; "
            "complete them first"
        )


@attrs.frozen
class InvalidPayload(DagError):
    """A payload (input, output, metadata) held a value that is not JSON-like."""

    path: str
    found: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return (
            f"{self.path}: expected a JSON-like value (dict with str keys, list, str, int, "
            f"float, bool or None), found {self.found}"
        )


@attrs.frozen
class InvalidValue(DagError):
    """A field held a value outside its allowed set (an unknown role or status)."""

    field: str
    expected: str
    found: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"{self.field}: expected {self.expected}, found {self.found}"


@attrs.frozen
class MalformedRecord(DagError):
    """A JSON Lines record could not be read as a node."""

    line: int
    reason: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"line {self.line}: {self.reason}"


@attrs.frozen
class AttachRefused(DagError):
    """An attach or merge that would make no sense: no peers, the session itself, or a cycle."""

    source: str
    reason: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"cannot attach {self.source!r}: {self.reason}"
