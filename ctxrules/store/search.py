"""Full-text search results, on either backend: the hit, the literal query and the argument checks."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from ctxrules.store.errors import InvalidArgument, StoreError
from ctxrules.store.rows import Rows
from ctxrules.store.sessions import require_session


@attrs.frozen
class SearchHit:
    """One node that matched: where it is, a snippet with the match in brackets, its rank.

    ``rank`` is lower for a better match (FTS5's BM25 score, or PostgreSQL's rank negated).
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


def refused(rows: Rows, session_id: str | None, limit: int) -> StoreError | None:
    """Why a search cannot run (a bad ``limit``, an unknown session), or None."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        return InvalidArgument("limit", repr(limit), "an integer >= 1")
    return None if session_id is None else require_session(rows, session_id)


def best_hits(hits: Iterable[SearchHit], limit: int) -> list[SearchHit]:
    """The first ``limit`` hits, each node once (its first, best-ranked hit)."""
    best: dict[tuple[str, str], SearchHit] = {}
    for hit in hits:
        best.setdefault((hit.session_id, hit.node_id), hit)
    return list(best.values())[:limit]
