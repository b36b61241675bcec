"""Commit rows: content-addressed, so a stored id always holds the same commit."""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Iterable

from returns.result import Failure, Result, Success

from ctxrules.canonical import canonical_json
from ctxrules.commit import ContextCommit, commit_from_json, commit_to_json
from ctxrules.store.errors import CorruptRecord, StoreError, UnknownCommit, row_json
from ctxrules.store.sessions import require_session


def put_commit(conn: sqlite3.Connection, commit: ContextCommit) -> Result[None, StoreError]:
    """Store ``commit`` under its id; an id already stored is a no-op (same id, same content)."""
    commit_id = commit.id
    if conn.execute("SELECT 1 FROM commits WHERE id = ?", (commit_id,)).fetchone() is not None:
        return Success(None)
    missing = require_session(conn, commit.session_id)
    if missing is not None:
        return Failure(missing)
    row = conn.execute(
        "SELECT coalesce(max(seq), -1) + 1 FROM commits WHERE session_id = ?",
        (commit.session_id,),
    ).fetchone()
    conn.execute(
        "INSERT INTO commits (id, session_id, seq, head_node_id, data) VALUES (?, ?, ?, ?, ?)",
        (
            commit_id,
            commit.session_id,
            int(row[0]),
            commit.head_node_id,
            canonical_json(commit_to_json(commit)),
        ),
    )
    return Success(None)


def _read(commit_id: str, data: str) -> Result[ContextCommit, StoreError]:
    # commit_from_json checks the content against the id, so a damaged row cannot pass.
    parsed = commit_from_json(row_json(data, "commit", commit_id))
    if isinstance(parsed, Failure):
        return Failure(CorruptRecord("commit", commit_id, parsed.failure().message))
    return Success(parsed.unwrap())


def get_commit(conn: sqlite3.Connection, commit_id: str) -> Result[ContextCommit, StoreError]:
    """The commit with this id, or `UnknownCommit`."""
    row = conn.execute("SELECT data FROM commits WHERE id = ?", (commit_id,)).fetchone()
    if row is None:
        return Failure(UnknownCommit(commit_id))
    return _read(commit_id, row[0])


def commits_for(
    conn: sqlite3.Connection, session_id: str
) -> Result[list[ContextCommit], StoreError]:
    """The session's commits in the order they were stored."""
    missing = require_session(conn, session_id)
    if missing is not None:
        return Failure(missing)
    commits = []
    rows = conn.execute(
        "SELECT id, data FROM commits WHERE session_id = ? ORDER BY seq", (session_id,)
    )
    for commit_id, data in rows:
        read = _read(commit_id, data)
        if isinstance(read, Failure):
            return Failure(read.failure())
        commits.append(read.unwrap())
    return Success(commits)


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
