"""Session and usage rows, on either backend: created once, listed, usage saved as it changes."""

from __future__ import annotations

import json
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
from ctxrules.store.rows import Rows
from ctxrules.tokens.usage import UsageState


@attrs.frozen
class SessionInfo:
    """One stored session as `Store.list_sessions` reports it."""

    id: str
    created_at: float
    title: str
    metadata: PMap[str, Frozen]
    node_count: int


def require_session(rows: Rows, session_id: str) -> StoreError | None:
    """`UnknownSession` unless the session is stored."""
    found = rows.one("SELECT 1 FROM sessions WHERE id = ?", (session_id,))
    return None if found is not None else UnknownSession(session_id)


def create_session(
    rows: Rows,
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
    # Insert first and compare after: two PostgreSQL workers creating one session at once
    # both succeed, where a read first would let the second fail on the key.
    rows.run(
        "INSERT INTO sessions (id, created_at, title, metadata) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (id) DO NOTHING",
        (session_id, float(created_at), title, meta),
    )
    row = rows.one("SELECT created_at, title, metadata FROM sessions WHERE id = ?", (session_id,))
    if row is None:
        return Success(None)
    stored = (row[0], row[1], row_json(row[2], "session", session_id))
    same = stored == (float(created_at), title, json.loads(meta))
    return Success(None) if same else Failure(SessionExists(session_id))


def list_sessions(rows: Rows) -> Result[list[SessionInfo], StoreError]:
    """Every session, oldest first (then by id), with its node count."""
    found = rows.all(
        "SELECT s.id, s.created_at, s.title, s.metadata,"
        " (SELECT count(*) FROM nodes n WHERE n.session_id = s.id)"
        " FROM sessions s ORDER BY s.created_at, s.id"
    )
    listed = []
    for session_id, created_at, title, metadata, count in found:
        frozen = freeze(row_json(metadata, "session", str(session_id)), "metadata").value_or(None)
        if not isinstance(frozen, PMap):
            return Failure(CorruptRecord("session", session_id, "metadata is not a JSON object"))
        listed.append(SessionInfo(session_id, created_at, title, frozen, int(count)))
    return Success(listed)


def load_usage(rows: Rows, session_id: str) -> Result[UsageState | None, StoreError]:
    """The saved usage of a session, or None; a damaged row raises `DamagedRow`."""
    row = rows.one("SELECT data FROM usage WHERE session_id = ?", (session_id,))
    if row is None:
        return Success(None)
    data = row_json(row[0], "usage", session_id)
    return Success(UsageState.from_json(data) if isinstance(data, dict) else None)


def put_usage(rows: Rows, session_id: str, usage: UsageState) -> Result[None, StoreError]:
    """Save a session's usage, replacing what was there (usage is state, not history)."""
    rows.run(
        "INSERT INTO usage (session_id, data) VALUES (?, ?)"
        " ON CONFLICT (session_id) DO UPDATE SET data = excluded.data",
        (session_id, canonical_json(usage.to_json())),
    )
    return Success(None)
