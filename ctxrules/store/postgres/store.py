"""`PostgresStore`: the store for many workers on many machines, on one PostgreSQL database.

Each public method is one transaction on a pooled connection and returns a `Result`;
psycopg errors become `PostgresFailed` at this boundary and never escape.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from psycopg_pool import ConnectionPool
from returns.result import Failure, Result

from ctxrules.dag import Call
from ctxrules.store.base import StoreBase
from ctxrules.store.blobs import BlobColumn
from ctxrules.store.errors import InvalidArgument, StoreError
from ctxrules.store.postgres import advance
from ctxrules.store.postgres import search as tsearch
from ctxrules.store.postgres.connection import Conn, lock_session, open_pool, run
from ctxrules.store.postgres.nodes import PgNodes
from ctxrules.store.postgres.rows import PgRows
from ctxrules.store.rows import Rows
from ctxrules.store.search import SearchHit
from ctxrules.store.tx import T, Tx, Work


def _tx(conn: Conn) -> Tx:
    rows = PgRows(conn)
    # Writers of one session queue on its row lock, so the next seq and the head a write
    # bases itself on cannot be stale; writers of other sessions run in parallel.
    return Tx(rows, PgNodes(rows), partial(lock_session, conn))


class PostgresStore(StoreBase):
    """Sessions, nodes, commits, heads and usage in one PostgreSQL database (or schema).

    Writers of one session queue on that session's row lock, so seqs stay dense and a
    head moves only by compare-and-set; writers of different sessions run in parallel.
    """

    __slots__ = ("_pool", "dsn")

    # bytea, not text: an original may hold a NUL, which PostgreSQL text refuses.
    blob_column = BlobColumn("data", str.encode)

    def __init__(self, pool: ConnectionPool[Any], dsn: str) -> None:
        super().__init__()
        self._pool: ConnectionPool[Any] | None = pool
        self.dsn = dsn

    def _transaction(
        self,
        operation: str,
        work: Work[T],
        *,
        write: bool,  # noqa: ARG002 - a write holds its session through `Tx.hold` instead
    ) -> Result[T, StoreError]:
        """Run ``work`` in one transaction on a pooled connection."""
        return run(self._pool, operation, lambda conn: work(_tx(conn)))

    def _search(
        self, rows: Rows, query: str, session_id: str | None, limit: int
    ) -> Result[list[SearchHit], StoreError]:
        """The FTS5-syntax query as a ``tsquery``; what it cannot translate is `BadQuery`."""
        return tsearch.search(rows, query, session_id, limit)

    def append_at_head(
        self, session_id: str, call: Call, head_name: str = "main"
    ) -> Result[int, StoreError]:
        """Append ``call`` and move the head from its predecessor to it, in three round trips.

        A stale head is `HeadMoved` naming the new head and nothing is stored.
        """
        work = lambda conn: advance.append_at_head(conn, session_id, call, head_name)  # noqa: E731
        return run(self._pool, "append_at_head", work)

    @classmethod
    def open(
        cls, dsn: str, *, min_size: int = 1, max_size: int = 4, timeout: float = 30.0
    ) -> Result[PostgresStore, StoreError]:
        """Connect to ``dsn`` (a ``postgresql://`` URL) and migrate its schema to this version.

        The pool keeps ``min_size`` to ``max_size`` connections; a call waits up to
        ``timeout`` seconds for one. The schema goes where the URL's ``search_path`` says.
        """
        for name, value in (("min_size", min_size), ("max_size", max_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                return Failure(InvalidArgument(name, repr(value), "an integer >= 1"))
        if min_size > max_size:
            return Failure(InvalidArgument("min_size", repr(min_size), f"<= max_size={max_size}"))
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            return Failure(InvalidArgument("timeout", repr(timeout), "seconds > 0"))
        opened = open_pool(dsn, min_size=min_size, max_size=max_size, timeout=float(timeout))
        return opened.map(lambda pool: cls(pool, dsn))

    def close(self) -> None:
        """Close the pool; later calls fail with `StoreClosed`. Closing twice is fine."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def __repr__(self) -> str:
        state = "open" if self._pool is not None else "closed"
        return f"PostgresStore({self.dsn.partition('?')[0]!r}, {state})"
