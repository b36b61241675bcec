"""Errors of the store: values that name the fault and carry the offending keys."""

from __future__ import annotations

import json

import attrs

from ctxrules.dag import DagError
from ctxrules.errors import ErrorValue, ReadOnDemandFailed


@attrs.frozen
class StoreError(ErrorValue):
    """Base of every store failure; ``message`` is the human-readable text."""


@attrs.frozen
class OpenFailed(StoreError):
    """The file could not be opened as a ctxrules store (not SQLite, corrupt, foreign, newer)."""

    path: str
    reason: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"cannot open store {self.path!r}: {self.reason}"


@attrs.frozen
class SqliteFailed(StoreError):
    """SQLite reported an error during an operation (I/O, a lock held past the timeout, ...)."""

    operation: str
    detail: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"{self.operation}: sqlite error: {self.detail}"


@attrs.frozen
class StoreClosed(StoreError):
    """An operation was asked of a store that was closed."""

    operation: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"{self.operation}: the store is closed; open it again with open_store"


@attrs.frozen
class InvalidArgument(StoreError):
    """An argument is outside what the operation accepts."""

    name: str
    value: str
    expected: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"{self.name}={self.value}: expected {self.expected}"


@attrs.frozen
class UnknownSession(StoreError):
    """An operation named a session the store does not hold."""

    session_id: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"unknown session {self.session_id!r}: create it first with create_session"


@attrs.frozen
class SessionExists(StoreError):
    """A session with this id is already stored with a different title, time or metadata."""

    session_id: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return (
            f"session {self.session_id!r} already exists with a different created_at, "
            "title or metadata"
        )


@attrs.frozen
class NodeConflict(StoreError):
    """A node with this id is already stored with different content: nodes are append-only."""

    session_id: str
    node_id: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return (
            f"session {self.session_id!r}: node {self.node_id!r} is already stored with "
            "different content; nodes are append-only"
        )


@attrs.frozen
class DagRefused(StoreError):
    """The history DAG refused the change (an unknown edge, a node not running, ...)."""

    session_id: str
    error: DagError

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"session {self.session_id!r}: {self.error.message}"


@attrs.frozen
class UnknownCommit(StoreError):
    """No commit with this id is stored."""

    commit_id: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"unknown commit {self.commit_id!r}"


@attrs.frozen
class HeadMoved(StoreError):
    """A compare-and-set head move found another head than the one expected."""

    session_id: str
    name: str
    expected: str | None
    actual: str | None

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return (
            f"session {self.session_id!r}: head {self.name!r} is {self.actual!r}, "
            f"not the expected {self.expected!r}; reload and retry"
        )


@attrs.frozen
class BadQuery(StoreError):
    """A full-text query is not valid FTS5 syntax."""

    query: str
    detail: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        # The query may be anything a model sent: it is shown cut, never whole.
        shown = repr(self.query) if len(self.query) <= 80 else f"{self.query[:80]!r}…"
        return (
            f"search query {shown}: {self.detail}; quote words with literal() to search plain text"
        )


@attrs.frozen
class CorruptRecord(StoreError):
    """A stored row could not be read back (edited outside the store, or damaged)."""

    table: str
    key: str
    reason: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"{self.table} {self.key!r} cannot be read: {self.reason}"


@attrs.frozen
class PostgresFailed(StoreError):
    """PostgreSQL reported an error (connection lost, a lock wait timed out, a conflict, ...).

    ``retryable`` is True when the same call may succeed if made again (a serialization
    failure, a deadlock, a dropped connection): the transaction was rolled back whole.
    """

    operation: str
    detail: str
    retryable: bool = False

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        again = " (rolled back; retry)" if self.retryable else ""
        return f"{self.operation}: postgresql error: {self.detail}{again}"


class DamagedRow(Exception):
    """Raised by a row decoder inside `run`, which returns it as a `CorruptRecord` Failure."""

    def __init__(self, table: str, key: str, reason: str) -> None:
        super().__init__(f"{table} {key!r}: {reason}")
        self.table, self.key, self.reason = table, key, reason


class LazyReadFailed(ReadOnDemandFailed):
    """Raised when a part of a resumed session read on demand (a commit's chunk, a node) cannot be read.

    A closed store, or a row changed outside ctxrules.
    ``error`` is the store's `StoreError`. `Context` turns it into a `StoreFailed`.
    """

    def __init__(self, error: StoreError) -> None:
        super().__init__(error.message)
        self.error = error


def row_json(data: object, table: str, key: str) -> object:
    """The JSON value stored in a row, or `DamagedRow` naming the row and what is wrong.

    >>> row_json('{"a": 1}', "node", "u1")
    {'a': 1}
    >>> row_json('{"a": ', "node", "u1")
    Traceback (most recent call last):
    ...
    ctxrules.store.errors.DamagedRow: node 'u1': invalid JSON at column 7: Expecting value
    """
    if not isinstance(data, str):
        raise DamagedRow(table, key, f"expected JSON text, found {type(data).__name__}")
    try:
        return json.loads(data)
    except json.JSONDecodeError as err:
        raise DamagedRow(table, key, f"invalid JSON at column {err.colno}: {err.msg}") from None
    except (ValueError, RecursionError) as err:
        raise DamagedRow(table, key, f"invalid JSON: {type(err).__name__}") from None


def unencodable(operation: str, err: UnicodeEncodeError) -> InvalidArgument:
    """The error for an argument holding text no database can keep (a lone surrogate)."""
    bad = err.object[err.start : err.end] if isinstance(err.object, str) else ""
    return InvalidArgument(
        f"{operation}'s text", f"{bad!r} at position {err.start}", "text without lone surrogates"
    )
