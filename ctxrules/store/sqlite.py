"""`SqliteStore`: the embedded default store, one SQLite file in WAL mode.

Each public method is one transaction and returns a `Result`; sqlite3 errors become
`SqliteFailed` at this boundary and never escape.
"""

from __future__ import annotations

import os
import sqlite3

from returns.result import Failure, Result

from ctxrules.store import fts5
from ctxrules.store.base import StoreBase
from ctxrules.store.blobs import TEXT_COLUMN
from ctxrules.store.connection import Synchronous, connect, run
from ctxrules.store.errors import InvalidArgument, StoreError
from ctxrules.store.rows import Rows, SqliteRows
from ctxrules.store.schema import CHUNKED_VERSION
from ctxrules.store.search import SearchHit
from ctxrules.store.sqlite_nodes import SqliteNodes
from ctxrules.store.tx import HOLD_SQLITE, T, Tx, Work


def _tx(conn: sqlite3.Connection, *, chunked: bool) -> Tx:
    rows = SqliteRows(conn)
    return Tx(rows, SqliteNodes(rows, chunked=chunked), HOLD_SQLITE)


def _chunked(conn: sqlite3.Connection) -> bool:
    # A file opened read-only may be older than schema step 5 (no output pieces yet).
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    return version >= CHUNKED_VERSION


class SqliteStore(StoreBase):
    """Sessions, nodes, commits, heads and usage in one SQLite file.

    >>> from ctxrules.dag import Call
    >>> store = SqliteStore.open(":memory:").unwrap()
    >>> store.create_session("s1", title="demo").unwrap()
    >>> store.append_node("s1", Call("u1", "user", output="hello")).unwrap()
    0
    >>> [hit.node_id for hit in store.search("hello").unwrap()]
    ['u1']
    >>> store.close()
    """

    __slots__ = ("_chunked", "_conn", "path")

    blob_column = TEXT_COLUMN

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        super().__init__()
        self._conn: sqlite3.Connection | None = conn
        self.path = path
        self._chunked = _chunked(conn)

    def _transaction(
        self, operation: str, work: Work[T], *, write: bool, durable: bool = True
    ) -> Result[T, StoreError]:
        """Run ``work`` in one transaction (``BEGIN IMMEDIATE`` for a write).

        A store opened ``synchronous="FULL"`` commits a write with ``durable=False`` at
        ``NORMAL``: the log is written, not synced; the next ``FULL`` commit syncs it whole.
        """
        return run(
            self._conn,
            operation,
            lambda conn: work(_tx(conn, chunked=self._chunked)),
            write=write,
            durable=durable,
        )

    def _search(
        self, rows: Rows, query: str, session_id: str | None, limit: int
    ) -> Result[list[SearchHit], StoreError]:
        """FTS5's search: a query in its own syntax; bad syntax is `BadQuery`."""
        return fts5.search(rows, query, session_id, limit, chunked=self._chunked)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "FULL",
        busy_timeout: float = 30.0,
        read_only: bool = False,
    ) -> Result[SqliteStore, StoreError]:
        """Open (or create) the store at ``path``; a file that is no store opens to a `Failure`.

        ``read_only=True`` opens an existing store without writing to it or its folder (an
        empty file stays empty and is refused); every write then fails as a value.

        ``synchronous="FULL"`` makes every returned write survive power loss as well as a
        killed process; ``"NORMAL"`` only the latter, for faster bulk loads. A writer that
        finds the file locked waits up to ``busy_timeout`` seconds.

        >>> print(SqliteStore.open("x.db", synchronous="OFF").failure())  # type: ignore[arg-type]
        synchronous='OFF': expected 'FULL' or 'NORMAL'
        """
        if synchronous not in ("FULL", "NORMAL"):
            expected = "'FULL' or 'NORMAL'"
            return Failure(InvalidArgument("synchronous", repr(synchronous), expected))
        if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, int | float):
            return Failure(InvalidArgument("busy_timeout", repr(busy_timeout), "seconds >= 0"))
        if busy_timeout < 0:
            return Failure(InvalidArgument("busy_timeout", repr(busy_timeout), "seconds >= 0"))
        mode: Synchronous = "READ_ONLY" if read_only else synchronous
        return connect(path, busy_timeout=busy_timeout, synchronous=mode).map(
            lambda conn: cls(conn, os.fspath(path))
        )

    def close(self) -> None:
        """Close the connection; later calls fail with `StoreClosed`. Closing twice is fine."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def __repr__(self) -> str:
        state = "open" if self._conn is not None else "closed"
        return f"SqliteStore({self.path!r}, {state})"
