"""SQLite's search: an FTS5 query over the node text index, per session or across sessions."""

from __future__ import annotations

import sqlite3

from returns.result import Failure, Result, Success

from ctxrules.store.errors import BadQuery, StoreError
from ctxrules.store.rows import Rows
from ctxrules.store.search import SearchHit, best_hits

_SELECT = """
    SELECT f.session_id, f.node_id, n.seq, n.role,
           snippet(nodes_fts, 2, '[', ']', '…', 16), f.rank
    FROM nodes_fts AS f
    JOIN nodes AS n ON n.session_id = f.session_id AND n.id = f.node_id
    WHERE nodes_fts MATCH ? {session}
    ORDER BY f.rank, n.session_id, n.seq
    LIMIT ?
"""


def _is_query_error(err: sqlite3.Error) -> bool:
    # FTS5 reports every query syntax problem as a plain SQLITE_ERROR ("fts5: syntax
    # error", "no such column", "unterminated string"); I/O and lock errors have their own.
    return err.sqlite_errorcode == sqlite3.SQLITE_ERROR and "no such table" not in str(err)


def search(
    rows: Rows, query: str, session_id: str | None, limit: int
) -> Result[list[SearchHit], StoreError]:
    """The best ``limit`` nodes for an FTS5 query, best first; ties in session and seq order."""
    scope = () if session_id is None else (session_id,)
    sql = _SELECT.format(session="" if session_id is None else "AND f.session_id = ?")
    try:
        # A completed node has two index rows (its input, then its output); keep its best.
        found = rows.all(sql, (query, *scope, 2 * limit))
    except sqlite3.OperationalError as err:
        if _is_query_error(err):
            return Failure(BadQuery(query, str(err)))
        raise
    return Success(best_hits((SearchHit(*row) for row in found), limit))
