"""PostgreSQL's search: the FTS5-syntax query as a ``tsquery`` over the nodes' ``tsvector``."""

from __future__ import annotations

import json

from returns.result import Failure, Result, Success

from ctxrules.store.errors import BadQuery, StoreError
from ctxrules.store.index_text import INDEXED_CHARS
from ctxrules.store.postgres.query import EMPTY, QuerySyntaxError, translate
from ctxrules.store.postgres.words import body_text, snippet
from ctxrules.store.rows import Rows
from ctxrules.store.search import SearchHit, best_hits

# Rank normalisation 1 divides by the log of the length, so shorter nodes rank first, as
# BM25 does in SQLite; the rank is negated so that, as there, lower is better.
_SELECT = """
    SELECT n.session_id, n.id, n.seq, n.role, n.fixed, n.output, -ts_rank(n.tsv, q, 1) AS rank
    FROM nodes AS n, to_tsquery('simple', ?) AS q
    WHERE n.tsv @@ q {session}
    ORDER BY rank, n.session_id, n.seq
    LIMIT ?
"""


def _body(fixed: str, output: str) -> str:
    # The text a snippet is cut from, read back from the node (no copy of it is stored).
    record = json.loads(fixed)
    record["output"] = json.loads(output)
    return body_text(record)[:INDEXED_CHARS].replace("\x00", "")


def search(
    rows: Rows, query: str, session_id: str | None, limit: int
) -> Result[list[SearchHit], StoreError]:
    """The best ``limit`` nodes for an FTS5-syntax query, best first; ties in session, seq order."""
    try:
        translated = translate(query)
    except QuerySyntaxError as err:
        return Failure(BadQuery(query, str(err)))
    if translated.tsquery == EMPTY:
        # Nothing to look for (phrases of no words only): nothing matches, as in FTS5.
        return Success([])
    scope = () if session_id is None else (session_id,)
    sql = _SELECT.format(session="" if session_id is None else "AND n.session_id = ?")
    found = rows.all(sql, (translated.tsquery, *scope, limit))
    hits = (
        SearchHit(
            sid,
            node_id,
            seq,
            role,
            snippet(_body(fixed, output), translated.terms, translated.prefixes),
            float(rank),
        )
        for sid, node_id, seq, role, fixed, output, rank in found
    )
    return Success(best_hits(hits, limit))
