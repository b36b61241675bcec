"""What a session holds beyond the `Store` protocol's reach: its named heads and its blobs.

`ctxrules migrate` must carry them, and the protocol names a head only by its name and has
no way to list offloaded originals. Both backends keep them in the same tables, so one
query reads them on either, in the store's own transaction.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from returns.result import Failure, Result, Success

from ctxrules.store.connection import run as run_sqlite
from ctxrules.store.errors import StoreError, UnknownSession
from ctxrules.store.protocol import Store
from ctxrules.store.rows import Rows, SqliteRows
from ctxrules.store.sqlite import SqliteStore


@runtime_checkable
class KeepsBlobs(Protocol):
    """A store that keeps offloaded originals and can list a session's (both backends do)."""

    def put_blob(self, session_id: str, handle: str, text: str) -> Result[str, StoreError]:
        """Keep ``text`` whole under ``handle``; its content digest."""
        ...

    def get_blob(self, session_id: str, handle: str) -> Result[str | None, StoreError]:
        """The text kept under ``handle``, or None."""
        ...

    def session_blobs(self, session_id: str) -> Result[dict[str, str], StoreError]:
        """Every offloaded text of the session by handle."""
        ...


def session_blobs(store: Store, session_id: str) -> Result[dict[str, str], StoreError]:
    """The session's offloaded originals by handle; none for a store that keeps no blobs.

    >>> from ctxrules.store import open_store
    >>> with open_store("sqlite://").unwrap() as store:
    ...     store.create_session("s").unwrap()
    ...     _ = store.put_blob("s", "h:1", "a long original").unwrap()
    ...     session_blobs(store, "s").unwrap()
    {'h:1': 'a long original'}
    """
    if isinstance(store, KeepsBlobs):
        return store.session_blobs(session_id)
    return store.get_head(session_id).map(lambda _: {})


def _heads(rows: Rows, session_id: str) -> Result[dict[str, str], StoreError]:
    if rows.one("SELECT 1 FROM sessions WHERE id = ?", (session_id,)) is None:
        return Failure(UnknownSession(session_id))
    listed = rows.all(
        "SELECT name, node_id FROM heads WHERE session_id = ? ORDER BY name", (session_id,)
    )
    return Success({str(name): str(node) for name, node in listed})


def session_heads(store: Store, session_id: str) -> Result[dict[str, str], StoreError]:
    """Every named head of the session, name to node id (``main`` alone on another backend).

    >>> from ctxrules.dag import Session
    >>> from ctxrules.store import open_store
    >>> with open_store("sqlite://").unwrap() as store:
    ...     session = Session("s").send("user", "hi").unwrap()
    ...     _ = store.save_session(session).unwrap()
    ...     store.move_head("s", "draft", None, session.head).unwrap()
    ...     sorted(session_heads(store, "s").unwrap())
    ['draft', 'main']
    """
    operation = "session_heads"
    if isinstance(store, SqliteStore):
        conn = store._conn  # noqa: SLF001 - the protocol has no way to list heads (see module doc)
        return run_sqlite(conn, operation, lambda c: _heads(SqliteRows(c), session_id), write=False)
    postgres = _postgres_heads(store, session_id)
    if postgres is not None:
        return postgres
    return store.get_head(session_id).map(lambda head: {} if head is None else {"main": head})


def _postgres_heads(store: Store, session_id: str) -> Result[dict[str, str], StoreError] | None:
    try:
        from ctxrules.store.postgres import PostgresStore  # noqa: PLC0415 - optional extra
        from ctxrules.store.postgres.connection import run  # noqa: PLC0415 - see above
        from ctxrules.store.postgres.rows import PgRows  # noqa: PLC0415 - see above
    except ImportError:
        return None
    if not isinstance(store, PostgresStore):
        return None
    pool = store._pool  # noqa: SLF001 - the protocol has no way to list heads (see module doc)
    return run(pool, "session_heads", lambda conn: _heads(PgRows(conn), session_id))
