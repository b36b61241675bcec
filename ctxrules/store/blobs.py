"""Offloaded originals, on either backend: whole texts stored once by content hash, named per session by handle."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import attrs
from returns.result import Failure, Result, Success

from ctxrules.store.errors import InvalidArgument, StoreError
from ctxrules.store.rows import Rows


@attrs.frozen
class BlobColumn:
    """Where a backend keeps a blob's text: the ``blobs`` column and how a text is written to it."""

    name: str
    encode: Callable[[str], object]


#: SQLite keeps the text as TEXT.
TEXT_COLUMN = BlobColumn("text", str)


def blob_digest(text: str) -> str:
    """The content address of a text: the SHA-256 of its UTF-8 bytes, in hex.

    >>> blob_digest("")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(text.encode()).hexdigest()


def _text(data: object) -> str:
    return bytes(data).decode() if isinstance(data, bytes | bytearray | memoryview) else str(data)


def put_blob(
    rows: Rows, column: BlobColumn, session_id: str, handle: str, text: str
) -> Result[str, StoreError]:
    """Store ``text`` under ``handle`` in the session and return its digest.

    The same text again is a no-op; another text under a stored handle is refused (a handle
    names one original forever).
    """
    digest = blob_digest(text)
    row = rows.one(
        "SELECT digest FROM offloads WHERE session_id = ? AND handle = ?", (session_id, handle)
    )
    if row is not None:
        if row[0] != digest:
            expected = "the text this handle was first stored with (a handle never changes)"
            return Failure(InvalidArgument("handle", repr(handle), expected))
        return Success(digest)
    rows.run(
        f"INSERT INTO blobs (digest, chars, {column.name}) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",  # noqa: S608 - the column is a constant of a backend
        (digest, len(text), column.encode(text)),
    )
    rows.run(
        "INSERT INTO offloads (session_id, handle, digest) VALUES (?, ?, ?)",
        (session_id, handle, digest),
    )
    return Success(digest)


def get_blob(
    rows: Rows, column: BlobColumn, session_id: str, handle: str
) -> Result[str | None, StoreError]:
    """The text stored under ``handle`` in the session, or None when nothing is."""
    row = rows.one(
        f"SELECT b.{column.name} FROM offloads AS o JOIN blobs AS b ON b.digest = o.digest"  # noqa: S608 - see above
        " WHERE o.session_id = ? AND o.handle = ?",
        (session_id, handle),
    )
    return Success(None if row is None else _text(row[0]))


def session_blobs(
    rows: Rows, column: BlobColumn, session_id: str
) -> Result[dict[str, str], StoreError]:
    """Every offloaded text of the session by handle."""
    found = rows.all(
        f"SELECT o.handle, b.{column.name} FROM offloads AS o JOIN blobs AS b"  # noqa: S608 - see above
        " ON b.digest = o.digest WHERE o.session_id = ? ORDER BY o.handle",
        (session_id,),
    )
    return Success({str(handle): _text(data) for handle, data in found})
