"""Full-text search in PostgreSQL: the FTS5-syntax query as a ``tsquery`` over the ``tsvector``."""

from __future__ import annotations

from returns.result import Failure, Result, Success

from ctxrules.store.errors import BadQuery, InvalidArgument, StoreError
from ctxrules.store.postgres.connection import Conn
from ctxrules.store.postgres.query import QuerySyntaxError, translate
from ctxrules.store.postgres.records import require_session
from ctxrules.store.postgres.words import snippet
from ctxrules.store.search import SearchHit

# Rank normalisation 1 divides by the log of the length, so shorter nodes rank first, as
# BM25 does in SQLite; the rank is negated so that, as there, lower is better.
_SELECT = """
    SELECT n.session_id, n.id, n.seq, n.role, n.body, -ts_rank(n.tsv, q, 1) AS rank
    FROM nodes AS n, to_tsquery('simple', %(query)s) AS q
    WHERE n.tsv @@ q {session}
    ORDER BY rank, n.session_id, n.seq
    LIMIT %(rows)s
"""


def search(
    conn: Conn, query: str, session_id: str | None, limit: int
) -> Result[list[SearchHit], StoreError]:
    """The best ``limit`` nodes for an FTS5-syntax query, best first; ties in session, seq order."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        return Failure(InvalidArgument("limit", repr(limit), "an integer >= 1"))
    if session_id is not None:
        missing = require_session(conn, session_id)
        if missing is not None:
            return Failure(missing)
    try:
        translated = translate(query)
    except QuerySyntaxError as err:
        return Failure(BadQuery(query, str(err)))
    sql = _SELECT.format(session="" if session_id is None else "AND n.session_id = %(session)s")
    params = {"query": translated.tsquery, "session": session_id, "rows": limit}
    rows = conn.execute(sql, params).fetchall()
    return Success(
        [
            SearchHit(
                sid,
                node_id,
                seq,
                role,
                snippet(body, translated.terms, translated.prefixes),
                float(rank),
            )
            for sid, node_id, seq, role, body, rank in rows
        ]
    )
