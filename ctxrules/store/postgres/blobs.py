"""Offloaded originals in PostgreSQL: whole texts stored once by content hash, named per session by handle.

The same contract as the SQLite store's (`ctxrules.store.blobs`), inside the caller's
transaction, with the session's row locked by the caller for writes.
"""

from __future__ import annotations

from returns.result import Failure, Result, Success

from ctxrules.store.blobs import blob_digest
from ctxrules.store.errors import InvalidArgument, StoreError
from ctxrules.store.postgres.connection import Conn


def _text(data: object) -> str:
    return bytes(data).decode() if isinstance(data, bytes | bytearray | memoryview) else str(data)


def put_blob(conn: Conn, session_id: str, handle: str, text: str) -> Result[str, StoreError]:
    """Store ``text`` under ``handle`` in the session; its digest. Another text under the handle is refused."""
    digest = blob_digest(text)
    row = conn.execute(
        "SELECT digest FROM offloads WHERE session_id = %s AND handle = %s", (session_id, handle)
    ).fetchone()
    if row is not None:
        if row[0] != digest:
            expected = "the text this handle was first stored with (a handle never changes)"
            return Failure(InvalidArgument("handle", repr(handle), expected))
        return Success(digest)
    conn.execute(
        "INSERT INTO blobs (digest, chars, data) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
        (digest, len(text), text.encode()),
    )
    conn.execute(
        "INSERT INTO offloads (session_id, handle, digest) VALUES (%s, %s, %s)",
        (session_id, handle, digest),
    )
    return Success(digest)


def get_blob(conn: Conn, session_id: str, handle: str) -> Result[str | None, StoreError]:
    """The text stored under ``handle`` in the session, or None when nothing is."""
    row = conn.execute(
        "SELECT b.data FROM offloads AS o JOIN blobs AS b ON b.digest = o.digest "
        "WHERE o.session_id = %s AND o.handle = %s",
        (session_id, handle),
    ).fetchone()
    return Success(None if row is None else _text(row[0]))


def session_blobs(conn: Conn, session_id: str) -> Result[dict[str, str], StoreError]:
    """Every offloaded text of the session by handle."""
    rows = conn.execute(
        "SELECT o.handle, b.data FROM offloads AS o JOIN blobs AS b ON b.digest = o.digest "
        "WHERE o.session_id = %s ORDER BY o.handle",
        (session_id,),
    ).fetchall()
    return Success({str(h): _text(d) for h, d in rows})
