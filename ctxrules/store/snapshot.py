"""Saving a whole session at once: its nodes, head, commits and usage in one transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from returns.result import Failure, Result, Success

from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Session
from ctxrules.store import commits, heads, nodes, sessions
from ctxrules.store.errors import HeadMoved, StoreError
from ctxrules.store.rows import SqliteRows
from ctxrules.store.turn import TurnSteps, TurnWrite, TurnWritten, apply_turn
from ctxrules.tokens.usage import UsageState


def _ensure_session(
    conn: sqlite3.Connection, session_id: str, created_at: float, title: str
) -> Result[None, StoreError]:
    if sessions.require_session(conn, session_id) is None:
        return Success(None)
    return sessions.create_session(conn, session_id, created_at, title, None)


def _sync_head(
    conn: sqlite3.Connection, session: Session, name: str, expected: str | None
) -> Result[None, StoreError]:
    if session.head is None:
        return Success(None)
    stored = heads.get_head(conn, session.session_id, name)
    if isinstance(stored, Success) and stored.unwrap() == session.head:
        return Success(None)
    return heads.move_head(conn, session.session_id, name, expected, session.head)


def _put_commits(
    conn: sqlite3.Connection, batch: Iterable[ContextCommit], known: set[str], fresh: list[str]
) -> Result[None, StoreError]:
    for commit in commits.parents_first(batch):
        put = commits.put_commit(conn, commit, known)
        if isinstance(put, Failure):
            return Failure(put.failure())
        fresh.extend(put.unwrap().digests)
    return Success(None)


def save_session(
    conn: sqlite3.Connection,
    session: Session,
    *,
    batch: Iterable[ContextCommit],
    usage: UsageState | None,
    head_name: str,
    expected_head: str | None,
    created_at: float,
    title: str,
    known: set[str],
    fresh: list[str],
) -> Result[int, StoreError]:
    """Store ``session`` (created if missing) and what goes with it; the nodes added.

    Saving the same session again adds nothing. The head moves by compare-and-set from
    ``expected_head`` unless it already points at ``session.head``.
    """
    session_id = session.session_id
    return (
        _ensure_session(conn, session_id, created_at, title)
        .bind(lambda _: nodes.append_graph(conn, session_id, session.graph))
        .bind(
            lambda added: (
                _sync_head(conn, session, head_name, expected_head)
                .bind(lambda _: _put_commits(conn, batch, known, fresh))
                .bind(
                    lambda _: (
                        sessions.put_usage(conn, session_id, usage)
                        if usage is not None
                        else Success(None)
                    )
                )
                .map(lambda _: added)
            )
        )
    )


def append_at_head(
    conn: sqlite3.Connection, session_id: str, call: Call, head_name: str
) -> Result[int, StoreError]:
    """Append ``call`` and move the head from ``call.predecessor`` to it; `HeadMoved` if stale."""
    actual = heads.get_head(conn, session_id, head_name)
    if isinstance(actual, Success) and actual.unwrap() != call.predecessor:
        return Failure(HeadMoved(session_id, head_name, call.predecessor, actual.unwrap()))
    return nodes.append_node(conn, session_id, call).bind(
        lambda seq: heads.move_head(conn, session_id, head_name, call.predecessor, call.id).map(
            lambda _: seq
        )
    )


def write_turn(
    conn: sqlite3.Connection, turn: TurnWrite, known: set[str], fresh: list[str]
) -> Result[TurnWritten, StoreError]:
    """Store a turn's nodes, completions, head, commits and usage; all or nothing."""
    steps = TurnSteps(
        SqliteRows(conn),
        lambda sid, call: nodes.append_node(conn, sid, call),
        lambda sid, node_id, output, status: nodes.complete_node(
            conn, sid, node_id, output, status
        ),
        lambda sid, name, old, new: heads.move_head(conn, sid, name, old, new),
        lambda sid, usage: sessions.put_usage(conn, sid, usage),
    )
    return apply_turn(steps, turn, known, fresh)
