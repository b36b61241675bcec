"""Named heads of a session, on either backend, moved only by compare-and-set on the head the mover last saw."""

from __future__ import annotations

from returns.result import Failure, Result, Success

from ctxrules.dag import UnknownNode
from ctxrules.store.errors import DagRefused, HeadMoved, InvalidArgument, StoreError
from ctxrules.store.rows import Rows

#: The node a named head points at.
SELECT_HEAD = "SELECT node_id FROM heads WHERE session_id = ? AND name = ?"
#: Whether a node is stored.
SELECT_NODE = "SELECT 1 FROM nodes WHERE session_id = ? AND id = ?"


def get_head(rows: Rows, session_id: str, name: str) -> str | None:
    """The node the head points at, or None if the session has no head of that name."""
    row = rows.one(SELECT_HEAD, (session_id, name))
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


def head_refused(
    session_id: str,
    name: str,
    expected_old: str | None,
    actual: str | None,
    *,
    new: str,
    stored: bool,
) -> StoreError | None:
    """Why the head may not move from ``actual`` to ``new`` (``stored``: whether ``new`` is), or None."""
    if actual != expected_old:
        return HeadMoved(session_id, name, expected_old, actual)
    if not stored:
        return DagRefused(session_id, UnknownNode(new, "head"))
    return None


def set_head(rows: Rows, session_id: str, name: str, new: str) -> None:
    """Point the head at ``new`` (the caller checked it may move)."""
    rows.run(
        "INSERT INTO heads (session_id, name, node_id) VALUES (?, ?, ?)"
        " ON CONFLICT (session_id, name) DO UPDATE SET node_id = excluded.node_id",
        (session_id, name, new),
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
    stored = (
        rows.one(SELECT_NODE, (session_id, new)) is not None if actual == expected_old else True
    )
    refused = head_refused(session_id, name, expected_old, actual, new=new, stored=stored)
    if refused is not None:
        return Failure(refused)
    set_head(rows, session_id, name, new)
    return Success(None)
