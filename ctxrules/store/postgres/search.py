"""PostgreSQL's search: the FTS5-syntax query as a ``tsquery`` over the nodes' ``tsvector``."""

from __future__ import annotations

from returns.result import Failure, Result, Success

from ctxrules.store.errors import BadQuery, StoreError
from ctxrules.store.postgres.query import QuerySyntaxError, translate
from ctxrules.store.postgres.words import snippet
from ctxrules.store.rows import Rows
from ctxrules.store.search import SearchHit, best_hits

# Rank normalisation 1 divides by the log of the length, so shorter nodes rank first, as
# BM25 does in SQLite; the rank is negated so that, as there, lower is better.
_SELECT = """
    SELECT n.session_id, n.id, n.seq, n.role, n.body, -ts_rank(n.tsv, q, 1) AS rank
    FROM nodes AS n, to_tsquery('simple', ?) AS q
    WHERE n.tsv @@ q {session}
    ORDER BY rank, n.session_id, n.seq
    LIMIT ?
"""


def search(
    rows: Rows, query: str, session_id: str | None, limit: int
) -> Result[list[SearchHit], StoreError]:
    """The best ``limit`` nodes for an FTS5-syntax query, best first; ties in session, seq order."""
    try:
        translated = translate(query)
    except QuerySyntaxError as err:
        return Failure(BadQuery(query, str(err)))
    scope = () if session_id is None else (session_id,)
    sql = _SELECT.format(session="" if session_id is None else "AND n.session_id = ?")
    found = rows.all(sql, (translated.tsquery, *scope, limit))
    hits = (
        SearchHit(
            sid,
            node_id,
            seq,
            role,
            snippet(body, translated.terms, translated.prefixes),
            float(rank),
        )
        for sid, node_id, seq, role, body, rank in found
    )
    return Success(best_hits(hits, limit))
