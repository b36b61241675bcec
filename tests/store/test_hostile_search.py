"""Searches a model chooses: repeated words, long phrases, deep parentheses, huge queries.

On SQLite a query repeating a word took 2.6 s at 30 words and did not return at 5,000:
FTS5's ``snippet`` scores every window against every match, and each repeated phrase
multiplies the matches. The query is bounded before it runs (`literal` keeps each word
once and a few terms; `query_problem` refuses the rest on both backends), and a snippet
is cut from a bounded chunk of the hit's text.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from typing import Any

import pytest

from ctxrules.dag import Session
from ctxrules.store import BadQuery, SqliteStore, Store, fts5, literal
from ctxrules.store.fts5 import DENSE_MATCHES, SNIPPET_CHUNK
from ctxrules.store.rows import Params, SqliteRows
from ctxrules.store.search import PHRASE_TERMS, QUERY_TERMS

#: Texts a hostile tool result could put in a session: every word matches again and again.
HOSTILE_TEXTS = (
    "hello world " * 8_000,
    "a " * 49_000,
    "a.a." * 25_000,
    " ".join(f"w{i % 16}" for i in range(20_000)),
    "x" * 99_000,
)
#: Queries of at most 10,000 characters built to be slow.
HOSTILE_QUERIES = (
    " ".join(["hello"] * 30),
    "hello world " * 800,
    " ".join(["a"] * 4_999),
    "a." * 5_000,
    " ".join(f"w{i % 16}" for i in range(2_000))[:10_000],
    "x" * 10_000,
)


def _hostile_session(store: Store, nodes: int = len(HOSTILE_TEXTS), size: int = 0) -> None:
    """The hostile texts as nodes, in turn; each ``size`` characters long when given."""
    session = Session("s")
    for i in range(nodes):
        text = HOSTILE_TEXTS[i % len(HOSTILE_TEXTS)]
        if size:
            text = (text * (size // len(text) + 1))[:size]
        session = session.send("user", text, created_at=1.0).unwrap()
    store.create_session("s").unwrap()
    store.append_graph("s", session.graph).unwrap()


class CountingRows(SqliteRows):
    """`SqliteRows` that keeps every statement's parameters, by the statement's first words."""

    def __init__(self, rows: SqliteRows) -> None:
        super().__init__(rows.conn)
        self.seen: list[tuple[str, tuple[object, ...]]] = []

    def all(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row, the statement noted."""
        self.seen.append((sql, tuple(params)))
        return super().all(sql, params)

    def one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row, the statement noted."""
        self.seen.append((sql, tuple(params)))
        return super().one(sql, params)

    def run(self, sql: str, params: Params = ()) -> None:
        """Run it, the statement noted."""
        self.seen.append((sql, tuple(params)))
        super().run(sql, params)

    def many(self, sql: str, rows: Iterable[Params]) -> None:
        """Run it once per row, each noted."""
        listed = [tuple(row) for row in rows]
        self.seen += [(sql, row) for row in listed]
        super().many(sql, listed)

    def texts(self, statement: str) -> list[str]:
        """The text parameters of every statement that starts with ``statement``."""
        return [str(p[1]) for sql, p in self.seen if sql.startswith(statement) and len(p) == 2]


def test_literal_keeps_each_word_once_and_a_bounded_number_of_terms() -> None:
    """A word again adds nothing to an AND; a long word or many words are cut to the bound."""
    assert literal(" ".join(["hello"] * 5_000)) == '"hello"'
    assert literal("Hello hello HELLO world") == '"Hello" "world"'
    assert literal("a." * 5_000) == '"' + ".".join(["a"] * PHRASE_TERMS) + '"'
    many = literal(" ".join(f"w{i}" for i in range(1_000)))
    assert many.count('"') == 2 * QUERY_TERMS


def test_a_raw_query_too_large_or_too_deep_is_refused_on_each_backend(store: Store) -> None:
    """More terms than the bound, or deep parentheses, are a `BadQuery` (PostgreSQL recursed)."""
    store.create_session("s").unwrap()
    for query in ("(" * 3_000 + "a" + ")" * 3_000, " ".join(["a"] * 5_000), "a OR " * 2_000 + "b"):
        failure = store.search(query, session_id="s").failure()
        assert isinstance(failure, BadQuery), (query[:20], failure)
        # The query is shown cut in the message, never whole.
        assert len(str(failure)) < 300


def test_snippets_are_cut_from_bounded_chunks() -> None:
    """No text longer than a chunk goes to FTS5's snippet, and a late match is still shown."""
    with SqliteStore.open(":memory:").unwrap() as store:
        _hostile_session(store)
        session = Session("late").send("user", "filler " * 12_000 + "needle at the end").unwrap()
        store.create_session("late").unwrap()
        store.append_graph("late", session.graph).unwrap()
        inserted: list[int] = []

        def trace(sql: str) -> None:
            if sql.startswith("INSERT INTO temp.snippets"):
                inserted.append(len(sql))

        store._conn.set_trace_callback(trace)
        for query in HOSTILE_QUERIES:
            store.search(literal(query), session_id="s").unwrap()
        hits = store.search("needle", session_id="late").unwrap()
        store._conn.set_trace_callback(None)
    assert inserted
    assert max(inserted) <= SNIPPET_CHUNK + 200
    assert hits[0].snippet.startswith("…")
    assert hits[0].snippet.endswith("[needle] at the end")


def test_snippets_of_a_large_hostile_session_read_one_chunk_per_hit_and_cut_none_dense() -> None:
    """40 nodes x 100,000 characters: one chunk per hit is indexed, and FTS5's snippet cuts no dense chunk.

    FTS5's snippet works in the square of a chunk's matches, and every chunk of every hit
    went into the temp index: 1.6 to 4 MB of text indexed and 1,000-match chunks cut per query.
    """
    with SqliteStore.open(":memory:").unwrap() as store:
        _hostile_session(store, nodes=40, size=100_000)
        for query in HOSTILE_QUERIES:
            rows = CountingRows(SqliteRows(store._conn))
            hits = fts5.search(rows, literal(query), "s", 40).unwrap()
            indexed = rows.texts("INSERT INTO temp.snippet_chunks")
            assert sum(map(len, indexed)) <= len(hits) * SNIPPET_CHUNK, query[:20]
            words = {w.lower() for w in re.findall(r"[^\W_]+", query)}
            for cut in rows.texts("INSERT INTO temp.snippets"):
                matched = sum(w.lower() in words for w in re.findall(r"[^\W_]+", cut))
                assert matched <= DENSE_MATCHES, query[:20]
            assert all("[" in hit.snippet for hit in hits), query[:20]


def test_a_dense_chunk_is_cut_at_its_first_match() -> None:
    """A chunk with more matches than FTS5's snippet is given shows the words from its first match, marked."""
    with SqliteStore.open(":memory:").unwrap() as store:
        text = "intro " + "spam " * 300 + "tail"
        session = Session("d").send("user", text).unwrap()
        store.create_session("d").unwrap()
        store.append_graph("d", session.graph).unwrap()
        (hit,) = store.search("spam", session_id="d").unwrap()
    assert hit.snippet == "…" + " ".join(["[spam]"] * 16) + "…"


@pytest.mark.slow
def test_a_large_hostile_session_answers_hostile_queries_within_a_second() -> None:
    """40 nodes x 100,000 characters on SQLite: each hostile query answers in at most 1 s."""
    with SqliteStore.open(":memory:").unwrap() as store:
        _hostile_session(store, nodes=40, size=100_000)
        _each_hostile_query_within_a_second(store)


@pytest.mark.slow
def test_search_history_answers_hostile_queries_within_a_second(store: Store) -> None:
    """Each hostile query, as search_history sends it, answers in at most 1 s on each backend."""
    _hostile_session(store)
    _each_hostile_query_within_a_second(store)


def _each_hostile_query_within_a_second(store: Store) -> None:
    for query in HOSTILE_QUERIES:
        spent = []
        for _ in range(3):  # the best of three: a neighbour's load is not the query's cost
            start = time.perf_counter()
            store.search(literal(query), session_id="s", limit=40).unwrap()
            spent.append(time.perf_counter() - start)
        assert min(spent) <= 1.0, (query[:40], spent)
