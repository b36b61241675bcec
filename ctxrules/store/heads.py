"""Named heads of a session, on either backend, moved only by compare-and-set on the head the mover last saw."""

from __future__ import annotations

from returns.result import Failure, Result, Success

from ctxrules.dag import UnknownNode
from ctxrules.store.errors import DagRefused, HeadMoved, InvalidArgument, StoreError
from ctxrules.store.rows import Rows


def get_head(rows: Rows, session_id: str, name: str) -> str | None:
    """The node the head points at, or None if the session has no head of that name."""
    row = rows.one(
        "SELECT node_id FROM heads WHERE session_id = ? AND name = ?", (session_id, name)
    )
    return None if row is None else str(row[0])


def all_heads(rows: Rows, session_id: str) -> dict[str, str]:
    """Every named head of the session, name to node id, in name order."""
    listed = rows.all(
        "SELECT name, node_id FROM heads WHERE session_id = ? ORDER BY name", (session_id,)
    )
    return {str(name): str(node) for name, node in listed}


def bad_name(name: str) -> StoreError | None:
    """`InvalidArgument` for an empty head name, else None."""
    return (
        InvalidArgument("name", "''", "a non-empty head name such as 'main'") if not name else None
    )


def move_head(
    rows: Rows, session_id: str, name: str, expected_old: str | None, new: str
) -> Result[None, StoreError]:
    """Point the head at ``new`` if it still points at ``expected_old`` (None: no head yet).

    The caller holds the session for writing (SQLite's write lock, PostgreSQL's row lock),
    so of two movers that saw the same head, one wins and the other gets `HeadMoved`.
    """
    refused = bad_name(name)
    if refused is not None:
        return Failure(refused)
    actual = get_head(rows, session_id, name)
    if actual != expected_old:
        return Failure(HeadMoved(session_id, name, expected_old, actual))
    if rows.one("SELECT 1 FROM nodes WHERE session_id = ? AND id = ?", (session_id, new)) is None:
        return Failure(DagRefused(session_id, UnknownNode(new, "head")))
    rows.run(
        "INSERT INTO heads (session_id, name, node_id) VALUES (?, ?, ?)"
        " ON CONFLICT (session_id, name) DO UPDATE SET node_id = excluded.node_id",
        (session_id, name, new),
    )
    return Success(None)
