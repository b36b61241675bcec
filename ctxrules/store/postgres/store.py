"""`PostgresStore`: the store for many workers on many machines, on one PostgreSQL database.

Each public method is one transaction on a pooled connection and returns a `Result`;
psycopg errors become `PostgresFailed` at this boundary and never escape.
"""

from __future__ import annotations

from typing import TypeGuard

from psycopg.conninfo import conninfo_to_dict
from returns.result import Failure, Result

from ctxrules.dag import Call
from ctxrules.store.base import StoreBase
from ctxrules.store.blobs import BlobColumn
from ctxrules.store.errors import InvalidArgument, StoreError
from ctxrules.store.postgres import advance
from ctxrules.store.postgres import search as tsearch
from ctxrules.store.postgres.connection import open_link, run, run_write
from ctxrules.store.postgres.link import Link, PoolSettings
from ctxrules.store.postgres.nodes import PgNodes
from ctxrules.store.postgres.rows import PgRows
from ctxrules.store.rows import Rows
from ctxrules.store.search import SearchHit
from ctxrules.store.tx import HOLD_POSTGRES, T, Tx, Work


def _tx(rows: PgRows) -> Tx:
    # Writers of one session queue on its row lock, so the next seq and the head a write
    # bases itself on cannot be stale; writers of other sessions run in parallel.
    return Tx(rows, PgNodes(rows), HOLD_POSTGRES)


class PostgresStore(StoreBase):
    """Sessions, nodes, commits, heads and usage in one PostgreSQL database (or schema).

    Writers of one session queue on that session's row lock, so seqs stay dense and a
    head moves only by compare-and-set; writers of different sessions run in parallel.
    """

    __slots__ = ("_link", "dsn")

    # bytea, not text: an original may hold a NUL, which PostgreSQL text refuses.
    blob_column = BlobColumn("data", str.encode)

    def __init__(self, link: Link, dsn: str) -> None:
        super().__init__()
        self._link: Link | None = link
        self.dsn = dsn

    def _transaction(
        self, operation: str, work: Work[T], *, write: bool, durable: bool = True
    ) -> Result[T, StoreError]:
        """Run ``work`` in one transaction on a pooled connection (a write's in few round trips).

        A write with ``durable=False`` commits with ``synchronous_commit`` off: the server
        does not wait for its log to reach the disk; the next durable commit waits for it.
        """
        if write:
            work_rows = lambda rows: work(_tx(rows))  # noqa: E731
            return run_write(self._link, operation, work_rows, durable=durable)
        return run(self._link, operation, lambda conn: work(_tx(PgRows(conn))))

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
        return run(self._link, "append_at_head", work)

    @classmethod
    def open(
        cls,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = 4,
        timeout: float = 30.0,
        connect_timeout: float | None = None,
        read_only: bool = False,
    ) -> Result[PostgresStore, StoreError]:
        """Connect to ``dsn`` (a ``postgresql://`` URL) and migrate its schema to this version.

        The pool keeps ``min_size`` to ``max_size`` connections; a call waits up to
        ``timeout`` seconds for one while all are busy. While the server is unreachable a
        call fails after one connection attempt of at most ``connect_timeout`` seconds
        (default: the URL's ``connect_timeout``, else 5). The schema goes where the URL's
        ``search_path`` says. ``read_only=True`` creates no schema where none is: a database
        (or ``search_path``) that holds no ctxrules store is refused, as an empty file is.
        """
        for name, value in (("min_size", min_size), ("max_size", max_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                return Failure(InvalidArgument(name, repr(value), "an integer >= 1"))
        if min_size > max_size:
            return Failure(InvalidArgument("min_size", repr(min_size), f"<= max_size={max_size}"))
        if not _seconds(timeout):
            return Failure(InvalidArgument("timeout", repr(timeout), "seconds > 0"))
        seconds = connect_timeout if connect_timeout is not None else _url_connect_timeout(dsn)
        if not _seconds(seconds):
            return Failure(InvalidArgument("connect_timeout", repr(seconds), "seconds > 0"))
        settings = PoolSettings(min_size, max_size, float(timeout), float(seconds))
        return open_link(dsn, settings, create=not read_only).map(lambda link: cls(link, dsn))

    @property
    def reachable(self) -> bool:
        """False from the first sign the server is gone until a connection to it succeeds again."""
        return self._link is not None and self._link.reachable

    def close(self) -> None:
        """Close the pool; later calls fail with `StoreClosed`. Closing twice is fine."""
        link, self._link = self._link, None
        if link is not None:
            link.close()

    def __repr__(self) -> str:
        state = "open" if self._link is not None else "closed"
        return f"PostgresStore({self.dsn.partition('?')[0]!r}, {state})"


#: How long one connection attempt may take when neither `open` nor the URL says.
DEFAULT_CONNECT_TIMEOUT = 5.0


def _seconds(value: object) -> TypeGuard[float]:
    # A positive, finite number of seconds (bool is an int, and not one).
    return not isinstance(value, bool) and isinstance(value, int | float) and 0 < value < 1e9


def _url_connect_timeout(dsn: str) -> object:
    # The URL's own connect_timeout when it has one (checked as an argument would be).
    try:
        given = conninfo_to_dict(dsn).get("connect_timeout")
    except Exception:  # noqa: BLE001 - a malformed URL is refused when connecting, with its reason
        return DEFAULT_CONNECT_TIMEOUT
    if given is None:
        return DEFAULT_CONNECT_TIMEOUT
    try:
        return float(str(given))
    except ValueError:
        return given
