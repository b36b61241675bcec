"""`SqliteStore`: the embedded default store, one SQLite file in WAL mode.

Each public method is one transaction and returns a `Result`; sqlite3 errors become
`SqliteFailed` at this boundary and never escape.
"""

from __future__ import annotations

import os
import sqlite3

from returns.result import Failure, Result, Success

from ctxrules.store import fts5
from ctxrules.store.base import StoreBase
from ctxrules.store.blobs import TEXT_COLUMN
from ctxrules.store.connection import Synchronous, connect, run
from ctxrules.store.errors import InvalidArgument, StoreError
from ctxrules.store.objects import object_key
from ctxrules.store.rows import Rows, SqliteRows
from ctxrules.store.schema import BINARY_KEYS_VERSION, CHUNKED_VERSION, EDGE_VERSION
from ctxrules.store.search import SearchHit
from ctxrules.store.sqlite_nodes import IndexTexts, SqliteNodes
from ctxrules.store.tx import HOLD_SQLITE, T, Tx, Work

#: Index rows (or characters of their texts) a store's writes leave waiting before a durable
#: write puts them into the FTS5 index in one insert. FTS5 writes a segment at each
#: transaction that inserts: a request's four rows cost 28 us each, rows in batches of 64
#: about 8 us (and fewer log pages, fewer merges later). A search indexes what waits first.
INDEX_BATCH_ROWS = 64
INDEX_BATCH_CHARS = 1_000_000


def _tx(conn: sqlite3.Connection, *, version: int, texts: IndexTexts | None = None) -> Tx:
    rows = SqliteRows(conn)
    nodes = SqliteNodes(
        rows, chunked=version >= CHUNKED_VERSION, edge_index=version >= EDGE_VERSION, texts=texts
    )
    keys = object_key if version >= BINARY_KEYS_VERSION else str
    return Tx(rows, nodes, HOLD_SQLITE, keys)


def _version(conn: sqlite3.Connection) -> int:
    # A file opened read-only may be older than the last schema step (not upgraded).
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


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

    __slots__ = ("_chunked", "_conn", "_read_only", "_texts", "_tx", "path")

    blob_column = TEXT_COLUMN

    def __init__(self, conn: sqlite3.Connection, path: str, *, read_only: bool = False) -> None:
        super().__init__()
        self._conn: sqlite3.Connection | None = conn
        self.path = path
        self._read_only = read_only
        version = _version(conn)
        self._chunked = version >= CHUNKED_VERSION
        #: The texts of the index rows this store wrote that wait for the next sync.
        self._texts: IndexTexts = {}
        # The transaction's view of the one connection, made once: it holds no state.
        self._tx = _tx(conn, version=version, texts=self._texts)

    def _transaction(
        self, operation: str, work: Work[T], *, write: bool, durable: bool = True
    ) -> Result[T, StoreError]:
        """Run ``work`` in one transaction (``BEGIN IMMEDIATE`` for a write).

        A store opened ``synchronous="FULL"`` commits a write with ``durable=False`` at
        ``NORMAL``: the log is written, not synced; the next ``FULL`` commit syncs it whole.
        A node's text goes into the search index with every other waiting, at the first
        durable write once `INDEX_BATCH_ROWS` rows (or `INDEX_BATCH_CHARS` characters of
        text) wait, or at a search, an open or a close: one index segment a batch.
        """
        tx = self._tx

        def run_work(_conn: sqlite3.Connection) -> Result[T, StoreError]:
            done = work(tx)
            if write and durable and isinstance(done, Success) and self._batch_full():
                fts5.index_waiting(tx.rows, self._texts)
            return done

        result = run(self._conn, operation, run_work, write=write, durable=durable)
        if isinstance(result, Failure):
            self._texts.clear()  # what a rolled-back write cached
        return result

    def search(
        self, query: str, session_id: str | None = None, limit: int = 20
    ) -> Result[list[SearchHit], StoreError]:
        """Nodes matching a query in FTS5 syntax, best first (the index first made whole)."""
        self._index_waiting()
        return super().search(query, session_id, limit)

    def _batch_full(self) -> bool:
        """Whether the index rows this store wrote and has not indexed make a batch."""
        texts = self._texts
        return len(texts) >= INDEX_BATCH_ROWS or sum(map(len, texts.values())) >= INDEX_BATCH_CHARS

    def _index_waiting(self) -> None:
        """Put the index rows waiting into the index now, if any (a read first: no lock taken else).

        A store opened read-only cannot: it searches what was indexed (`close`, `search`).
        """
        if self._conn is None or self._read_only:
            return
        waiting = self._transaction(
            "index", lambda tx: Success(fts5.any_waiting(tx.rows)), write=False
        )
        if waiting.value_or(default_value=False):
            # The index is derived from rows already stored: it need not wait for the disk.
            work = lambda tx: Success(fts5.index_waiting(tx.rows, self._texts))  # noqa: E731
            self._transaction("index", work, write=True, durable=False)

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
        opened = connect(path, busy_timeout=busy_timeout, synchronous=mode).map(
            lambda conn: cls(conn, os.fspath(path), read_only=read_only)
        )
        if isinstance(opened, Success):
            # Rows a killed writer left waiting are indexed before anything reads the index.
            opened.unwrap()._index_waiting()  # noqa: SLF001 - its own class
        return opened

    def close(self) -> None:
        """Close the connection; later calls fail with `StoreClosed`. Closing twice is fine.

        The index rows still waiting are indexed first, so a store opened read-only after
        finds everything this one stored.
        """
        self._index_waiting()
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def __repr__(self) -> str:
        state = "open" if self._conn is not None else "closed"
        return f"SqliteStore({self.path!r}, {state})"
