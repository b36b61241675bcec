"""Offloaded originals: whole texts stored once by content hash, named per session by handle."""

from __future__ import annotations

import hashlib
import sqlite3

from returns.result import Failure, Result, Success

from ctxrules.store.errors import InvalidArgument, StoreError
from ctxrules.store.sessions import require_session


def blob_digest(text: str) -> str:
    """The content address of a text: the SHA-256 of its UTF-8 bytes, in hex.

    >>> blob_digest("")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(text.encode()).hexdigest()


def put_blob(
    conn: sqlite3.Connection, session_id: str, handle: str, text: str
) -> Result[str, StoreError]:
    """Store ``text`` under ``handle`` in the session and return its digest.

    The same text again is a no-op; another text under a stored handle is refused (a handle
    names one original forever).
    """
    missing = require_session(conn, session_id)
    if missing is not None:
        return Failure(missing)
    digest = blob_digest(text)
    row = conn.execute(
        "SELECT digest FROM offloads WHERE session_id = ? AND handle = ?", (session_id, handle)
    ).fetchone()
    if row is not None:
        if row[0] != digest:
            expected = "the text this handle was first stored with (a handle never changes)"
            return Failure(InvalidArgument("handle", repr(handle), expected))
        return Success(digest)
    conn.execute(
        "INSERT OR IGNORE INTO blobs (digest, chars, text) VALUES (?, ?, ?)",
        (digest, len(text), text),
    )
    conn.execute(
        "INSERT INTO offloads (session_id, handle, digest) VALUES (?, ?, ?)",
        (session_id, handle, digest),
    )
    return Success(digest)


def get_blob(
    conn: sqlite3.Connection, session_id: str, handle: str
) -> Result[str | None, StoreError]:
    """The text stored under ``handle`` in the session, or None when nothing is."""
    missing = require_session(conn, session_id)
    if missing is not None:
        return Failure(missing)
    row = conn.execute(
        "SELECT b.text FROM offloads AS o JOIN blobs AS b ON b.digest = o.digest "
        "WHERE o.session_id = ? AND o.handle = ?",
        (session_id, handle),
    ).fetchone()
    return Success(None if row is None else str(row[0]))


def session_blobs(conn: sqlite3.Connection, session_id: str) -> Result[dict[str, str], StoreError]:
    """Every offloaded text of the session by handle."""
    missing = require_session(conn, session_id)
    if missing is not None:
        return Failure(missing)
    rows = conn.execute(
        "SELECT o.handle, b.text FROM offloads AS o JOIN blobs AS b ON b.digest = o.digest "
        "WHERE o.session_id = ? ORDER BY o.handle",
        (session_id,),
    ).fetchall()
    return Success({str(h): str(t) for h, t in rows})
