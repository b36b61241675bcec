"""Named heads of a session, moved only by compare-and-set on the head the mover last saw."""

from __future__ import annotations

import sqlite3

from returns.result import Failure, Result, Success

from ctxrules.dag import UnknownNode
from ctxrules.store.errors import DagRefused, HeadMoved, InvalidArgument, StoreError
from ctxrules.store.sessions import require_session


def get_head(
    conn: sqlite3.Connection, session_id: str, name: str
) -> Result[str | None, StoreError]:
    """The node the head points at, or None if the session has no head of that name."""
    missing = require_session(conn, session_id)
    if missing is not None:
        return Failure(missing)
    row = conn.execute(
        "SELECT node_id FROM heads WHERE session_id = ? AND name = ?", (session_id, name)
    ).fetchone()
    return Success(None if row is None else str(row[0]))


def move_head(
    conn: sqlite3.Connection, session_id: str, name: str, expected_old: str | None, new: str
) -> Result[None, StoreError]:
    """Point the head at ``new`` if it still points at ``expected_old`` (None: no head yet).

    Runs in a write transaction, so the read and the write are one atomic step: of two
    movers that saw the same head, one wins and the other gets `HeadMoved`.
    """
    if not name:
        return Failure(InvalidArgument("name", "''", "a non-empty head name such as 'main'"))
    actual = get_head(conn, session_id, name)
    if isinstance(actual, Failure):
        return Failure(actual.failure())
    if actual.unwrap() != expected_old:
        return Failure(HeadMoved(session_id, name, expected_old, actual.unwrap()))
    row = conn.execute(
        "SELECT 1 FROM nodes WHERE session_id = ? AND id = ?", (session_id, new)
    ).fetchone()
    if row is None:
        return Failure(DagRefused(session_id, UnknownNode(new, "head")))
    conn.execute(
        "INSERT INTO heads (session_id, name, node_id) VALUES (?, ?, ?) "
        "ON CONFLICT (session_id, name) DO UPDATE SET node_id = excluded.node_id",
        (session_id, name, new),
    )
    return Success(None)
