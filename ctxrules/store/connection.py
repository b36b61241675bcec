"""Opening a connection and running work in one transaction, with sqlite3 errors as values.

This is the boundary: nothing below it raises out of the public API. Writes start with
``BEGIN IMMEDIATE``, so a writer takes the write lock before it reads what it will base
its write on (the next seq, the current head); a second writer waits on the busy
timeout instead of failing or writing from a stale snapshot.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

from returns.result import Failure, Result, Success

from ctxrules.store.errors import (
    CorruptRecord,
    DamagedRow,
    OpenFailed,
    SqliteFailed,
    StoreClosed,
    StoreError,
    unencodable,
)
from ctxrules.store.schema import check_schema, ensure_schema

T = TypeVar("T")

#: ``FULL`` syncs the log on every commit (survives power loss); ``NORMAL`` survives a
#: killed process but may lose the last commits on power loss; ``READ_ONLY`` never writes.
Synchronous = Literal["FULL", "NORMAL", "READ_ONLY"]

#: A unit of work inside one transaction; a `Failure` rolls the transaction back.
Work = Callable[[sqlite3.Connection], Result[T, StoreError]]


def _rollback(conn: sqlite3.Connection) -> None:
    # If even the rollback fails, SQLite rolls the transaction back when the file is next
    # opened: the write never returned, so nothing acknowledged is lost.
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def run(
    conn: sqlite3.Connection | None,
    operation: str,
    work: Work[T],
    *,
    write: bool,
    durable: bool = True,
) -> Result[T, StoreError]:
    """Run ``work`` in one transaction: commit on `Success`, roll back on `Failure` or error.

    A write with ``durable=False`` on a connection opened ``FULL`` commits at ``NORMAL``.
    """
    if conn is None:
        return Failure(StoreClosed(operation))
    with _lock_of(conn):
        return _run(conn, operation, work, write=write, durable=durable)


class LockedConnection(sqlite3.Connection):
    """A connection with its own lock: `run` holds it for each transaction.

    `Context.aopenai` runs each call in a worker thread, and two threads' statements must
    never interleave in one transaction.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # noqa: ANN401 - sqlite3.connect passes its own
        super().__init__(*args, **kwargs)
        self.lock = threading.RLock()
        #: Whether the store was opened ``FULL``, and the ``synchronous`` now set.
        self.full = False
        self.syncing: Synchronous = "FULL"


def _sync_for(conn: sqlite3.Connection, *, durable: bool) -> None:
    """Set ``synchronous`` for the next write: ``NORMAL`` for one not durable, on a ``FULL`` store.

    In WAL mode the log is one file written in order: the next ``FULL`` commit syncs it
    whole, so the ``NORMAL`` commits before it become durable with it.
    """
    if not isinstance(conn, LockedConnection) or not conn.full:
        return
    wanted: Synchronous = "FULL" if durable else "NORMAL"
    if conn.syncing != wanted:
        conn.execute(f"PRAGMA synchronous = {wanted}")
        conn.syncing = wanted


def _lock_of(conn: sqlite3.Connection) -> contextlib.AbstractContextManager[object]:
    # A connection made elsewhere (a test's) is used from its own thread only.
    lock = getattr(conn, "lock", None)
    return lock if lock is not None else contextlib.nullcontext()


def _run(
    conn: sqlite3.Connection, operation: str, work: Work[T], *, write: bool, durable: bool
) -> Result[T, StoreError]:
    try:
        if write:
            _sync_for(conn, durable=durable)
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        result = work(conn)
        conn.execute("COMMIT" if isinstance(result, Success) else "ROLLBACK")
    except sqlite3.Error as err:
        _rollback(conn)
        return Failure(SqliteFailed(operation, str(err)))
    except DamagedRow as err:
        _rollback(conn)
        return Failure(CorruptRecord(err.table, err.key, err.reason))
    except UnicodeEncodeError as err:
        # An argument (a session id, a handle) no UTF-8 database can keep: the caller's.
        _rollback(conn)
        return Failure(unencodable(operation, err))
    except (ValueError, TypeError, AttributeError, KeyError, RecursionError) as err:
        # A row the store wrote is valid by construction: one that fails to decode was
        # changed outside it, and is reported as damaged rather than raised.
        _rollback(conn)
        return Failure(CorruptRecord("row", operation, f"{type(err).__name__}: {err}"))
    except BaseException:
        _rollback(conn)
        raise
    return result


def _write_ahead(conn: sqlite3.Connection, busy_ms: int) -> str:
    """Switch a new file to write-ahead logging, waiting out other openers; the mode it has.

    SQLite answers "database is locked" to this pragma at once, without the busy handler,
    while another process creates the same new file: retried within the busy timeout.
    """
    deadline = time.monotonic() + busy_ms / 1000
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]).lower()
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


def _configure(conn: sqlite3.Connection, path: str, busy_ms: int, sync: Synchronous) -> str | None:
    conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
    if sync == "READ_ONLY":
        return check_schema(conn)
    mode = _write_ahead(conn, busy_ms)
    if mode != "wal" and path != ":memory:":
        return f"the file cannot use write-ahead logging (journal_mode is {mode!r})"
    conn.execute(f"PRAGMA synchronous = {sync}")
    if isinstance(conn, LockedConnection):
        conn.full, conn.syncing = sync == "FULL", sync
    conn.execute("PRAGMA foreign_keys = ON")
    if not conn.execute("SELECT sqlite_compileoption_used('ENABLE_FTS5')").fetchone()[0]:
        return f"this Python's SQLite {sqlite3.sqlite_version} is built without FTS5"
    return None


def _read_only(name: str, busy_timeout: float) -> sqlite3.Connection:
    """A connection that writes nothing, not even beside the file, even in a read-only folder.

    A WAL store with its ``-wal`` file present may hold commits not yet in the main file,
    so it is read through it (``mode=ro``; the files exist already). Without one, every
    commit is in the main file, which is read as ``immutable``: SQLite then creates no
    shared-memory file, which a read-only folder would refuse.
    """
    uri = Path(name).absolute().as_uri()
    live = Path(f"{name}-wal").exists()
    query = "mode=ro" if live else "mode=ro&immutable=1"
    return sqlite3.connect(
        f"{uri}?{query}",
        timeout=busy_timeout,
        isolation_level=None,
        uri=True,
        check_same_thread=False,
        factory=LockedConnection,
    )


def connect(
    path: str | os.PathLike[str], *, busy_timeout: float, synchronous: Synchronous
) -> Result[sqlite3.Connection, StoreError]:
    """A configured connection to a store file, its schema created if the file is new.

    ``synchronous="READ_ONLY"`` opens an existing store without writing anything to it or
    beside it (no schema, no journal mode): what ``show`` and ``verify`` need.
    """
    name = os.fspath(path)
    try:
        # isolation_level=None: the module opens no implicit transactions; `run` does.
        # check_same_thread=False: async callers reach the store from worker threads, and
        # `run` holds the connection's lock for each transaction.
        conn = (
            _read_only(name, busy_timeout)
            if synchronous == "READ_ONLY"
            else sqlite3.connect(
                name,
                timeout=busy_timeout,
                isolation_level=None,
                check_same_thread=False,
                factory=LockedConnection,
            )
        )
    except sqlite3.Error as err:
        return Failure(OpenFailed(name, str(err)))
    try:
        refused = _configure(conn, name, int(busy_timeout * 1000), synchronous)
        if refused is None and synchronous != "READ_ONLY":
            conn.execute("BEGIN IMMEDIATE")
            refused = ensure_schema(conn)
            conn.execute("COMMIT" if refused is None else "ROLLBACK")
    except sqlite3.Error as err:
        refused = str(err)
    if refused is not None:
        _rollback(conn)
        conn.close()
        return Failure(OpenFailed(name, refused))
    return Success(conn)
