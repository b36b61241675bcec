"""Commit rows: content-addressed, so a stored id always holds the same commit."""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Iterable

from returns.result import Failure, Result

from ctxrules.commit import ContextCommit
from ctxrules.store import objects
from ctxrules.store.errors import StoreError
from ctxrules.store.rows import SqliteRows
from ctxrules.store.sessions import require_session


def put_commit(
    conn: sqlite3.Connection, commit: ContextCommit, known: set[str] | frozenset[str] = frozenset()
) -> Result[objects.Written, StoreError]:
    """Store ``commit`` and the objects it names not stored yet; a stored id is a no-op."""
    missing = require_session(conn, commit.session_id)
    if missing is not None:
        return Failure(missing)
    return objects.put_commit(SqliteRows(conn), commit, known)


def get_commit(
    conn: sqlite3.Connection, commit_id: str, *, check: bool = False
) -> Result[ContextCommit, StoreError]:
    """The commit with this id, or `UnknownCommit`."""
    return objects.CommitReader(SqliteRows(conn), check=check).get(commit_id)


def commits_for(
    conn: sqlite3.Connection, session_id: str, *, check: bool = False
) -> Result[list[ContextCommit], StoreError]:
    """The session's commits in the order they were stored, sharing their chunks."""
    missing = require_session(conn, session_id)
    if missing is not None:
        return Failure(missing)
    return objects.CommitReader(SqliteRows(conn), check=check).session(session_id)


def last_commit(
    conn: sqlite3.Connection, session_id: str
) -> Result[ContextCommit | None, StoreError]:
    """The session's most recently stored commit, or None."""
    missing = require_session(conn, session_id)
    if missing is not None:
        return Failure(missing)
    return objects.CommitReader(SqliteRows(conn)).last(session_id)


def parents_first(batch: Iterable[ContextCommit]) -> list[ContextCommit]:
    """The commits ordered so each comes after its parents in the batch, else as given.

    >>> a = ContextCommit("s", summary="a")
    >>> b = ContextCommit("s", parent_ids=(a.id,), summary="b")
    >>> [c.summary for c in parents_first([b, a, b])]
    ['a', 'b']
    """
    by_id = {commit.id: commit for commit in batch}
    waiting = {
        commit.id: {p for p in commit.parent_ids if p in by_id and p != commit.id}
        for commit in by_id.values()
    }
    children: dict[str, list[str]] = {}
    for commit_id, parents in waiting.items():
        for parent in parents:
            children.setdefault(parent, []).append(commit_id)
    ready = deque(commit_id for commit_id, parents in waiting.items() if not parents)
    ordered: list[ContextCommit] = []
    while ready:
        commit_id = ready.popleft()
        ordered.append(by_id[commit_id])
        for child in children.get(commit_id, ()):
            waiting[child].discard(commit_id)
            if not waiting[child]:
                ready.append(child)
    # Content addressing rules out cycles; a forged batch with one keeps its given order.
    placed = {commit.id for commit in ordered}
    return ordered + [commit for commit in by_id.values() if commit.id not in placed]
