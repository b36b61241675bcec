"""Session, commit, head and usage rows in PostgreSQL, inside the caller's transaction."""

from __future__ import annotations

import json
from collections.abc import Mapping

from pyrsistent import PMap
from returns.result import Failure, Result, Success

from ctxrules.canonical import canonical_json
from ctxrules.dag import UnknownNode, freeze, thaw
from ctxrules.store.errors import (
    CorruptRecord,
    DagRefused,
    HeadMoved,
    InvalidArgument,
    SessionExists,
    StoreError,
    UnknownSession,
)
from ctxrules.store.postgres.connection import Conn
from ctxrules.store.sessions import SessionInfo
from ctxrules.tokens.usage import UsageState


def require_session(conn: Conn, session_id: str) -> StoreError | None:
    """`UnknownSession` unless the session is stored."""
    row = conn.execute("SELECT 1 FROM sessions WHERE id = %s", (session_id,)).fetchone()
    return None if row is not None else UnknownSession(session_id)


def create_session(
    conn: Conn,
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
    # ON CONFLICT DO NOTHING: two workers creating the same session at once both succeed.
    conn.execute(
        "INSERT INTO sessions (id, created_at, title, metadata) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (id) DO NOTHING",
        (session_id, float(created_at), title, meta),
    )
    row = conn.execute(
        "SELECT created_at, title, metadata FROM sessions WHERE id = %s", (session_id,)
    ).fetchone()
    if row is not None and (row[0], row[1], json.loads(row[2])) != (
        float(created_at),
        title,
        json.loads(meta),
    ):
        return Failure(SessionExists(session_id))
    return Success(None)


def list_sessions(conn: Conn) -> Result[list[SessionInfo], StoreError]:
    """Every session, oldest first (then by id), with its node count."""
    rows = conn.execute(
        "SELECT s.id, s.created_at, s.title, s.metadata,"
        " (SELECT count(*) FROM nodes n WHERE n.session_id = s.id)"
        " FROM sessions s ORDER BY s.created_at, s.id"
    ).fetchall()
    listed = []
    for session_id, created_at, title, metadata, count in rows:
        frozen = freeze(json.loads(metadata), "metadata").value_or(None)
        if not isinstance(frozen, PMap):
            return Failure(CorruptRecord("session", session_id, "metadata is not a JSON object"))
        listed.append(SessionInfo(session_id, created_at, title, frozen, int(count)))
    return Success(listed)


def get_head(conn: Conn, session_id: str, name: str) -> Result[str | None, StoreError]:
    """The node the head points at, or None if the session has no head of that name."""
    row = conn.execute(
        "SELECT node_id FROM heads WHERE session_id = %s AND name = %s", (session_id, name)
    ).fetchone()
    return Success(None if row is None else str(row[0]))


def set_head(conn: Conn, session_id: str, name: str, node_id: str) -> None:
    """Point the head at a node just stored; the caller has checked the head it replaces."""
    conn.execute(
        "INSERT INTO heads (session_id, name, node_id) VALUES (%s, %s, %s)"
        " ON CONFLICT (session_id, name) DO UPDATE SET node_id = excluded.node_id",
        (session_id, name, node_id),
    )


def move_head(
    conn: Conn, session_id: str, name: str, expected_old: str | None, new: str
) -> Result[None, StoreError]:
    """Point the head at ``new`` if it still points at ``expected_old`` (None: no head yet).

    The caller holds the session's lock, so the read and the write are one atomic step: of
    two movers that saw the same head, one wins and the other gets `HeadMoved`.
    """
    if not name:
        return Failure(InvalidArgument("name", "''", "a non-empty head name such as 'main'"))
    actual = get_head(conn, session_id, name).unwrap()
    if actual != expected_old:
        return Failure(HeadMoved(session_id, name, expected_old, actual))
    row = conn.execute(
        "SELECT 1 FROM nodes WHERE session_id = %s AND id = %s", (session_id, new)
    ).fetchone()
    if row is None:
        return Failure(DagRefused(session_id, UnknownNode(new, "head")))
    set_head(conn, session_id, name, new)
    return Success(None)


def put_usage(conn: Conn, session_id: str, usage: UsageState) -> Result[None, StoreError]:
    """Save a session's usage, replacing what was there (usage is state, not history)."""
    conn.execute(
        "INSERT INTO usage (session_id, data) VALUES (%s, %s)"
        " ON CONFLICT (session_id) DO UPDATE SET data = excluded.data",
        (session_id, canonical_json(usage.to_json())),
    )
    return Success(None)


def load_usage(conn: Conn, session_id: str) -> Result[UsageState | None, StoreError]:
    """The saved usage of a session, or None; a damaged row is `CorruptRecord`."""
    row = conn.execute("SELECT data FROM usage WHERE session_id = %s", (session_id,)).fetchone()
    if row is None:
        return Success(None)
    try:
        data = json.loads(row[0])
        return Success(UsageState.from_json(data) if isinstance(data, dict) else None)
    except (ValueError, TypeError) as err:
        return Failure(CorruptRecord("usage", session_id, str(err)))
