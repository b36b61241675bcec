"""Full-text search results, on either backend: the hit, the literal query and the argument checks."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

import attrs

from ctxrules.store.errors import BadQuery, InvalidArgument, StoreError
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


#: Words (runs of letters and digits, as the index splits text) a query may hold: each one
#: more multiplies the work of matching, ranking and cutting snippets, and a model (or text
#: injected into a tool result) chooses them.
QUERY_TERMS = 32
#: Terms of one phrase `literal` keeps: a phrase's matching visits each of its terms at
#: every place its first term occurs.
PHRASE_TERMS = 8
#: Parentheses a query may nest.
QUERY_DEPTH = 16

_TERM = re.compile(r"[^\W_]+")


def literal(text: str) -> str:
    """A query that matches every word of ``text`` as typed, FTS5 operators and all.

    Each word becomes a quoted phrase (inner quotes doubled); the words are ANDed. A word
    again (in any case) adds nothing to an AND and is left out; a phrase keeps at most
    `PHRASE_TERMS` terms and all of them at most `QUERY_TERMS` (a word is cut after its
    last term that fits).

    >>> literal("tail -n 5 AND foo:bar")
    '"tail" "-n" "5" "AND" "foo:bar"'
    >>> literal("json JSON json loads")
    '"json" "loads"'
    """
    kept: dict[str, str] = {}
    room = QUERY_TERMS
    for word in text.split():
        if room == 0:
            break
        if word.lower() in kept:
            continue
        terms = list(itertools.islice(_TERM.finditer(word), PHRASE_TERMS + 1))
        fits = min(room, PHRASE_TERMS)
        phrase = word[: terms[fits - 1].end()] if len(terms) > fits else word
        kept[phrase.lower()] = phrase
        room -= min(len(terms), fits)
    return " ".join('"' + word.replace('"', '""') + '"' for word in kept.values())


def query_problem(query: str) -> str | None:
    """Why a query is refused before it runs (too many terms, parentheses too deep), or None.

    >>> query_problem("a " * 40)
    'more than 32 terms; search for fewer words'
    >>> query_problem("(" * 20 + "a" + ")" * 20)
    'parentheses nested more than 16 deep'
    """
    terms = sum(1 for _ in itertools.islice(_TERM.finditer(query), QUERY_TERMS + 1))
    if terms > QUERY_TERMS:
        return f"more than {QUERY_TERMS} terms; search for fewer words"
    depth = deepest = 0
    quoted = False
    for char in query:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "()":
            depth += 1 if char == "(" else -1
            deepest = max(deepest, depth)
    if deepest > QUERY_DEPTH:
        return f"parentheses nested more than {QUERY_DEPTH} deep"
    return None


def refused(rows: Rows, query: str, session_id: str | None, limit: int) -> StoreError | None:
    """Why a search cannot run (a bad ``limit``, a query too large, an unknown session), or None."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        return InvalidArgument("limit", repr(limit), "an integer >= 1")
    if isinstance(query, str) and (problem := query_problem(query)) is not None:
        return BadQuery(query, problem)
    return None if session_id is None else require_session(rows, session_id)


def best_hits(hits: Iterable[SearchHit], limit: int) -> list[SearchHit]:
    """The first ``limit`` hits, each node once (its first, best-ranked hit)."""
    best: dict[tuple[str, str], SearchHit] = {}
    for hit in hits:
        best.setdefault((hit.session_id, hit.node_id), hit)
    return list(best.values())[:limit]
