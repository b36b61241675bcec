"""Full-text search over node text (name, input and output), per session or across sessions."""

from __future__ import annotations

import sqlite3

import attrs
from returns.result import Failure, Result, Success

from ctxrules.store.errors import BadQuery, InvalidArgument, StoreError, UnknownSession
from ctxrules.store.sessions import require_session


@attrs.frozen
class SearchHit:
    """One node that matched: where it is, a snippet with the match in brackets, its rank.

    ``rank`` is FTS5's BM25 score: lower is a better match.
    """

    session_id: str
    node_id: str
    seq: int
    role: str
    snippet: str
    rank: float


def literal(text: str) -> str:
    """A query that matches every word of ``text`` as typed, FTS5 operators and all.

    Each word becomes a quoted phrase (inner quotes doubled); the words are ANDed.

    >>> literal("tail -n 5 AND foo:bar")
    '"tail" "-n" "5" "AND" "foo:bar"'
    """
    return " ".join('"' + word.replace('"', '""') + '"' for word in text.split())


_SELECT = """
    SELECT f.session_id, f.node_id, n.seq, n.role,
           snippet(nodes_fts, 2, '[', ']', '…', 16), f.rank
    FROM nodes_fts AS f
    JOIN nodes AS n ON n.session_id = f.session_id AND n.id = f.node_id
    WHERE nodes_fts MATCH :query {session}
    ORDER BY f.rank, n.session_id, n.seq
    LIMIT :rows
"""


def _is_query_error(err: sqlite3.Error) -> bool:
    # FTS5 reports every query syntax problem as a plain SQLITE_ERROR ("fts5: syntax
    # error", "no such column", "unterminated string"); I/O and lock errors have their own.
    return err.sqlite_errorcode == sqlite3.SQLITE_ERROR and "no such table" not in str(err)


def search(
    conn: sqlite3.Connection, query: str, session_id: str | None, limit: int
) -> Result[list[SearchHit], StoreError]:
    """The best ``limit`` nodes for an FTS5 query, best first; ties in session and seq order."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        return Failure(InvalidArgument("limit", repr(limit), "an integer >= 1"))
    if session_id is not None:
        missing = require_session(conn, session_id)
        if missing is not None:
            return Failure(UnknownSession(session_id))
    sql = _SELECT.format(session="" if session_id is None else "AND f.session_id = :session")
    # A completed node has two index rows (its input, then its output); keep its best.
    params = {"query": query, "session": session_id, "rows": 2 * limit}
    try:
        rows = conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as err:
        if _is_query_error(err):
            return Failure(BadQuery(query, str(err)))
        raise
    hits: dict[tuple[str, str], SearchHit] = {}
    for row in rows:
        hits.setdefault((row[0], row[1]), SearchHit(*row))
    return Success(list(hits.values())[:limit])
