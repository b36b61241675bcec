"""Full-text search over node text, within one session and across sessions."""

from __future__ import annotations

import pytest

from ctxrules.dag import Call, Session
from ctxrules.store import BadQuery, SearchHit, SqliteStore, Store, literal


@pytest.fixture
def searchable(store: Store, session: Session) -> Store:
    """The fixture session as 's1' and a second session 's2' sharing some words."""
    store.create_session("s1").unwrap()
    store.append_graph("s1", session.graph).unwrap()
    store.create_session("s2").unwrap()
    store.append_node("s2", Call("u1", "user", output="Parse this JSON log, not TOML.")).unwrap()
    store.append_node(
        "s2", Call("a1", "assistant", output="json.loads reads each line.", predecessor="u1")
    ).unwrap()
    return store


def _where(hits: list[SearchHit]) -> list[tuple[str, int, str]]:
    return [(hit.session_id, hit.seq, hit.snippet) for hit in hits]


def test_search_within_one_session(searchable: SqliteStore) -> None:
    """A word in a tool's input and output and in a reply hits those nodes of that session only."""
    hits = searchable.search("tomllib", session_id="s1").unwrap()
    assert _where(hits) == [
        ("s1", 2, 'grep {"pattern":"[tomllib]"} ["src/spec/load.py: import [tomllib]"]'),
        ("s1", 1, "Use [tomllib] from the standard library."),
    ]
    assert [hit.role for hit in hits] == ["tool", "assistant"]
    assert hits[0].rank <= hits[1].rank


def test_search_across_sessions(searchable: SqliteStore) -> None:
    """Without a session the same query finds matches in every session, best first."""
    assert _where(searchable.search("toml").unwrap()) == [
        ("s2", 0, "Parse this JSON log, not [TOML]."),
        ("s1", 0, "How do I parse [TOML] in Python?"),
    ]
    assert _where(searchable.search("parse", session_id="s2").unwrap()) == [
        ("s2", 0, "[Parse] this JSON log, not TOML."),
    ]


def test_search_honours_fts5_syntax_and_limit(searchable: SqliteStore) -> None:
    """Operators, prefixes and column-free phrases work; limit keeps the best n."""
    assert _where(searchable.search("pars* NOT json").unwrap()) == [
        ("s1", 0, "How do I [parse] TOML in Python?"),
    ]
    assert len(searchable.search("toml OR json", limit=1).unwrap()) == 1
    assert searchable.search("yaml AND toml").unwrap() == []


def test_a_completed_node_is_one_hit_with_its_output(store: Store) -> None:
    """A node found by its input and, once completed, by its output, is still one hit."""
    store.create_session("s").unwrap()
    store.append_node("s", Call("u", "user", output="find it")).unwrap()
    store.append_node(
        "s", Call("t", "tool", name="grep", input="needle", caller="u", status="running")
    ).unwrap()
    assert [h.node_id for h in store.search("needle").unwrap()] == ["t"]
    assert store.search("haystack").unwrap() == []
    store.complete_node("s", "t", "needle in the haystack").unwrap()
    assert [h.node_id for h in store.search("needle").unwrap()] == ["t"]
    assert [h.node_id for h in store.search("haystack", limit=1).unwrap()] == ["t"]


def test_a_query_syntax_error_is_a_failure(searchable: SqliteStore) -> None:
    """Bad FTS5 syntax returns BadQuery with the reason and a hint, never raising."""
    failure = searchable.search("AND").failure()
    # The reason is SQLite's own text there, and the same words from the PostgreSQL store.
    assert isinstance(failure, BadQuery)
    assert failure.detail.removeprefix("fts5: ") == 'syntax error near "AND"'
    assert failure.message == (
        f"search query 'AND': {failure.detail}; quote words with literal() to search plain text"
    )
    for query in ['"unterminated', "foo:bar", "tail -n", "*", "NEAR(", ""]:
        assert isinstance(searchable.search(query).failure(), BadQuery), query


def test_literal_searches_text_as_typed(searchable: SqliteStore) -> None:
    """literal() turns text with FTS5 operators into a query for those words."""
    assert [h.seq for h in searchable.search(literal("json.loads reads")).unwrap()] == [1]
    assert isinstance(searchable.search("NOT toml:").failure(), BadQuery)
    assert _where(searchable.search(literal("NOT toml:")).unwrap()) == [
        ("s2", 0, "Parse this JSON log, [not] [TOML]."),
    ]
