"""A pool of connections and one transaction per call, with psycopg errors as values.

This is the boundary: nothing below it raises out of the public API. A write on a session
first locks that session's row, so writers of one session queue (as SQLite's write lock
makes them) while writers of other sessions run in parallel; the next seq and the head a
write bases itself on are read under that lock, so they cannot be stale.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.pq import TransactionStatus
from returns.result import Failure, Result, Success

from ctxrules.store.errors import (
    CorruptRecord,
    DamagedRow,
    OpenFailed,
    PostgresFailed,
    StoreClosed,
    StoreError,
    unencodable,
)
from ctxrules.store.postgres.link import Conn, Link, PoolSettings
from ctxrules.store.postgres.rows import WriteRows
from ctxrules.store.postgres.schema import migrate, missing_store
from ctxrules.store.redact import shown_url

T = TypeVar("T")

#: A unit of work inside one transaction; a `Failure` rolls the transaction back.
Work = Callable[[Conn], Result[T, StoreError]]

#: Errors after which the same call, made again, may succeed: it was rolled back whole.
_RETRYABLE = (
    pg_errors.SerializationFailure,
    pg_errors.DeadlockDetected,
    pg_errors.UniqueViolation,
    pg_errors.LockNotAvailable,
    psycopg.OperationalError,
)


def _reason(err: psycopg.Error) -> str:
    diag = getattr(err, "diag", None)
    primary = diag.message_primary if diag is not None else None
    # The server may quote the statement's text back (a query a model chose): cut it.
    if primary:
        return str(primary)[:300]
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else type(err).__name__


def failed(operation: str, err: psycopg.Error) -> PostgresFailed:
    """The error value for a psycopg error; `retryable` when trying again may succeed."""
    return PostgresFailed(operation, _reason(err), isinstance(err, _RETRYABLE))


def run(link: Link | None, operation: str, work: Work[T]) -> Result[T, StoreError]:
    """Run ``work`` in one transaction: commit on `Success`, roll back on `Failure` or error."""
    if link is None:
        return Failure(StoreClosed(operation))
    result: Result[T, StoreError] = Failure(StoreClosed(operation))
    try:
        with link.connection() as conn, conn.transaction():
            result = work(conn)
            if not isinstance(result, Success):
                raise psycopg.Rollback
    except _MAPPED as err:
        return Failure(_refused(operation, err))
    return result


def run_write(
    link: Link | None,
    operation: str,
    work: Callable[[WriteRows], Result[T, StoreError]],
    *,
    durable: bool = True,
) -> Result[T, StoreError]:
    """`run` for a write, its statements sent in as few round trips as its reads allow (`WriteRows`).

    ``durable=False`` commits it without waiting for the server's log flush.
    """
    if link is None:
        return Failure(StoreClosed(operation))
    try:
        with link.connection() as conn:
            rows = WriteRows(conn, durable=durable)
            try:
                result = work(rows)
                if isinstance(result, Success):
                    rows.commit()
            finally:
                # A Failure, or an error under way: what the server holds is rolled back.
                if conn.info.transaction_status != TransactionStatus.IDLE and not conn.broken:
                    conn.execute("ROLLBACK")
    except _MAPPED as err:
        return Failure(_refused(operation, err))
    return result


#: What a transaction may raise that is returned as a value (`_refused`).
_MAPPED = (
    psycopg.Error,
    DamagedRow,
    UnicodeEncodeError,
    ValueError,
    TypeError,
    AttributeError,
    KeyError,
    RecursionError,
)


def _refused(operation: str, err: Exception) -> StoreError:
    """The error value of what a transaction raised (one of `_MAPPED`)."""
    if isinstance(err, psycopg.Error):
        return failed(operation, err)
    if isinstance(err, DamagedRow):
        return CorruptRecord(err.table, err.key, err.reason)
    if isinstance(err, UnicodeEncodeError):
        # An argument (a session id, a handle) no UTF-8 database can keep: the caller's.
        return unencodable(operation, err)
    # A row the store wrote decodes by construction: one that fails was changed outside
    # it (the transaction is rolled back already), and is reported, not raised.
    return CorruptRecord("row", operation, f"{type(err).__name__}: {err}")


def open_link(dsn: str, settings: PoolSettings, *, create: bool = True) -> Result[Link, StoreError]:
    """Connections to ``dsn`` with the schema migrated to this version, or `OpenFailed`.

    ``create=False`` refuses a schema that holds no store instead of creating one there.

    The first connection is made directly, so a wrong URL or a server that is down fails
    at once with the server's own reason instead of after the pool's retries.
    """
    refused: str | None = None
    try:
        with (
            psycopg.connect(dsn, connect_timeout=settings.connect_seconds) as conn,
            conn.transaction(),
        ):
            refused = None if create else missing_store(conn)
            refused = refused or migrate(conn)
            if refused is not None:
                raise psycopg.Rollback
    except psycopg.Error as err:
        return Failure(OpenFailed(shown_url(dsn), _reason(err)))
    if refused is not None:
        return Failure(OpenFailed(shown_url(dsn), refused))
    return Success(Link(dsn, settings))
