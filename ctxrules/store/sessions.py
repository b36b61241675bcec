"""Session rows and per-session usage: created once, listed, and usage saved as it changes."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

import attrs
from pyrsistent import PMap
from returns.result import Failure, Result, Success

from ctxrules.canonical import canonical_json
from ctxrules.dag import Frozen, freeze, thaw
from ctxrules.store.errors import (
    CorruptRecord,
    InvalidArgument,
    SessionExists,
    StoreError,
    UnknownSession,
    row_json,
)
from ctxrules.tokens.usage import UsageState


@attrs.frozen
class SessionInfo:
    """One stored session as `SqliteStore.list_sessions` reports it."""

    id: str
    created_at: float
    title: str
    metadata: PMap[str, Frozen]
    node_count: int


def require_session(conn: sqlite3.Connection, session_id: str) -> StoreError | None:
    """`UnknownSession` unless the session is stored."""
    row = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return None if row is not None else UnknownSession(session_id)


def create_session(
    conn: sqlite3.Connection,
    session_id: str,
    created_at: float,
    title: str,
    metadata: Mapping[str, object] | None,
) -> Result[None, StoreError]:
    """Insert a session row; the same row again is a no-op, a different one `SessionExists`."""
    if not session_id:
        return Failure(InvalidArgument("session_id", "''", "a non-empty string"))
    frozen = freeze(dict(metadata or {}), "metadata")
    if isinstance(frozen, Failure):
        error = frozen.failure()
        return Failure(InvalidArgument(error.path, error.found, "a JSON-like value"))
    meta = canonical_json(thaw(frozen.unwrap()))
    row = conn.execute(
        "SELECT created_at, title, metadata FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if row is not None:
        same = (row[0], row[1], json.loads(row[2])) == (created_at, title, json.loads(meta))
        return Success(None) if same else Failure(SessionExists(session_id))
    conn.execute(
        "INSERT INTO sessions (id, created_at, title, metadata) VALUES (?, ?, ?, ?)",
        (session_id, float(created_at), title, meta),
    )
    return Success(None)


def list_sessions(conn: sqlite3.Connection) -> Result[list[SessionInfo], StoreError]:
    """Every session, oldest first (then by id), with its node count."""
    rows = conn.execute(
        "SELECT s.id, s.created_at, s.title, s.metadata, "
        "(SELECT count(*) FROM nodes n WHERE n.session_id = s.id) "
        "FROM sessions s ORDER BY s.created_at, s.id"
    ).fetchall()
    sessions = []
    for session_id, created_at, title, metadata, count in rows:
        frozen = freeze(row_json(metadata, "session", str(session_id)), "metadata").value_or(None)
        if not isinstance(frozen, PMap):
            return Failure(CorruptRecord("session", session_id, "metadata is not a JSON object"))
        sessions.append(SessionInfo(session_id, created_at, title, frozen, count))
    return Success(sessions)


def load_usage(conn: sqlite3.Connection, session_id: str) -> UsageState | None:
    """The saved usage of a session, or None; raises on a damaged row (the caller catches)."""
    row = conn.execute("SELECT data FROM usage WHERE session_id = ?", (session_id,)).fetchone()
    if row is None:
        return None
    data = row_json(row[0], "usage", session_id)
    if not isinstance(data, dict):
        return None
    return UsageState.from_json(data)


def put_usage(
    conn: sqlite3.Connection, session_id: str, usage: UsageState
) -> Result[None, StoreError]:
    """Save a session's usage, replacing what was there (usage is state, not history)."""
    conn.execute(
        "INSERT INTO usage (session_id, data) VALUES (?, ?) "
        "ON CONFLICT (session_id) DO UPDATE SET data = excluded.data",
        (session_id, canonical_json(usage.to_json())),
    )
    return Success(None)
