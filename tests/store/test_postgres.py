"""What only the PostgreSQL store has: its triggers against raw SQL, its migrations, its URL."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pg_server
import pytest
from returns.result import Success

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Session
from ctxrules.store import OpenFailed, PostgresFailed, Store, open_store

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

# After the skip: these need psycopg.
from ctxrules.store.postgres import MIGRATIONS, SCHEMA_VERSION, Migration, PostgresStore  # noqa: E402
from ctxrules.store.postgres.nodes import insert_statement  # noqa: E402
from ctxrules.store.postgres.query import QuerySyntaxError, translate  # noqa: E402
from ctxrules.store.postgres.schema import migrate  # noqa: E402


@pytest.fixture
def url(postgres_server: pg_server.Server) -> str:
    """A fresh schema on the test server."""
    return pg_server.fresh_schema_url(postgres_server)


@pytest.fixture
def pg_store(url: str) -> Iterator[Store]:
    """An open PostgreSQL store on a fresh schema."""
    with open_store(url).unwrap() as opened:
        yield opened


def _raw(url: str, sql: str, *params: object) -> str:
    """Run one statement on a plain connection; the server's error text, or 'ok'."""
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql, params)  # type: ignore[arg-type]
    except psycopg.Error as err:
        return str(err.diag.message_primary)
    return "ok"


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("UPDATE nodes SET output = '\"forged\"'", "only a running node is completed, once"),
        ("UPDATE nodes SET seq = seq + 100", "only a running node is completed, once"),
        (
            "UPDATE nodes SET status = 'done', fixed = '{}' WHERE status = 'running'",
            "only a running node is completed, once",
        ),
        ("DELETE FROM nodes WHERE seq = 0", "a node is never deleted"),
        ("TRUNCATE nodes CASCADE", "nodes is append-only: it is never truncated"),
        (
            (
                "INSERT INTO nodes (session_id, id, seq, role, status, fixed, output, tsv)"
                " SELECT session_id, id, seq, role, status, fixed, '1', tsv FROM nodes"
                " ON CONFLICT (session_id, id) DO UPDATE SET output = excluded.output"
            ),
            "only a running node is completed, once",
        ),
        ("UPDATE commits SET head_node_id = 'forged'", "a content-addressed commit never changes"),
        ("DELETE FROM commits", "a content-addressed commit is never deleted"),
        ("TRUNCATE commits", "commits is append-only: it is never truncated"),
    ],
)
def test_raw_sql_cannot_rewrite_history(
    pg_store: Store, url: str, session: Session, sql: str, error: str
) -> None:
    """The triggers abort UPDATE, DELETE, TRUNCATE and upserts of nodes and commits."""
    running = session.record_call(session.head, "ls", {}, status="running").unwrap()
    pg_store.save_session(running).unwrap()
    commit = ContextCommit("s1").append_items([ContextItem("n", "user", tokens=1)])
    pg_store.put_commit(commit).unwrap()
    assert _raw(url, sql).endswith(error)
    assert pg_store.load_session("s1") == Success(running)
    assert pg_store.get_commit(commit.id) == Success(commit)


def test_raw_sql_may_complete_a_running_node_once(
    pg_store: Store, url: str, session: Session
) -> None:
    """The one change the triggers let through is the completion of a running node, once."""
    running = session.record_call(session.head, "ls", {}, status="running").unwrap()
    pg_store.save_session(running).unwrap()
    tool = running.graph.order[-1]
    complete = "UPDATE nodes SET output = %s, status = 'done' WHERE id = %s"
    for forged in ("handle = 'h:forged00'", "predecessor = 'forged'", "caller = 'forged'"):
        sql = complete.replace("WHERE", f", {forged} WHERE")
        assert _raw(url, sql, '"out"', tool).endswith("only a running node is completed, once")
    assert _raw(url, complete, '"out"', tool) == "ok"
    assert _raw(url, complete, '"again"', tool).endswith("only a running node is completed, once")
    assert pg_store.load_graph("s1") == running.complete(tool, "out").map(lambda s: s.graph)


def test_the_schema_is_versioned_and_migrated_once(url: str) -> None:
    """Opening records each step in schema_version; opening again applies nothing twice."""
    for _ in range(2):
        open_store(url).unwrap().close()
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
    assert [row[0] for row in rows] == [m.version for m in MIGRATIONS]
    assert [row[0] for row in rows] == list(range(1, SCHEMA_VERSION + 1))


def test_a_version_1_database_gains_the_blob_tables(url: str) -> None:
    """A database made before offload keeps its sessions, migrates to step 2 on open and keeps blobs."""
    with psycopg.connect(url) as conn, conn.transaction():
        assert migrate(conn, MIGRATIONS[:1]) is None
        conn.execute("INSERT INTO sessions (id, created_at) VALUES ('s', 0)")
    with open_store(url).unwrap() as store:
        assert store.put_blob("s", "h:aaaaaaaa", "kept").unwrap()
        assert store.get_blob("s", "h:aaaaaaaa").unwrap() == "kept"
    assert _raw(url, "UPDATE blobs SET chars = 0").endswith(
        "names one content-addressed blob forever"
    )
    assert _raw(url, "DELETE FROM offloads").endswith("names one content-addressed blob forever")


def test_a_later_step_is_applied_in_order_on_open(url: str) -> None:
    """A database at version 1 gets the steps after it, each recorded, in one transaction."""
    open_store(url).unwrap().close()
    extra = Migration(SCHEMA_VERSION + 1, "a test column", ("ALTER TABLE usage ADD note text",))
    with psycopg.connect(url) as conn, conn.transaction():
        assert migrate(conn, (*MIGRATIONS, extra)) is None
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT max(version) FROM schema_version").fetchone() == (
            extra.version,
        )
    # This ctxrules knows only SCHEMA_VERSION: the migrated database is now refused.
    failure = open_store(url).failure()
    assert isinstance(failure, OpenFailed)
    assert failure.reason == (
        f"schema version {extra.version} is newer than this ctxrules ({SCHEMA_VERSION}); "
        "upgrade ctxrules"
    )


def test_another_applications_tables_are_refused(url: str) -> None:
    """A schema that already has a sessions table but no schema_version is not taken over."""
    assert _raw(url, "CREATE TABLE sessions (x int)") == "ok"
    failure = open_store(url).failure()
    assert isinstance(failure, OpenFailed)
    assert failure.reason == "the schema holds tables of another application, not a ctxrules store"


def test_an_unreachable_server_fails_at_once_without_the_password(tmp_path: object) -> None:
    """A server that is not there is OpenFailed with its reason; the URL's password is hidden."""
    failure = open_store(f"postgresql://me:secret@/x?host={tmp_path}&port=1").failure()
    assert isinstance(failure, OpenFailed)
    assert "secret" not in failure.message
    assert failure.message.startswith("cannot open store 'postgresql://me:***@/x?host=")


def test_pool_arguments_are_checked(url: str) -> None:
    """Pool sizes and the timeout are checked before any connection is made."""
    assert PostgresStore.open(url, min_size=0).failure().message == (
        "min_size=0: expected an integer >= 1"
    )
    assert PostgresStore.open(url, min_size=3, max_size=2).failure().message == (
        "min_size=3: expected <= max_size=2"
    )
    assert PostgresStore.open(url, timeout=0).failure().message == "timeout=0: expected seconds > 0"


def test_a_dropped_connection_is_a_retryable_failure(url: str) -> None:
    """When the server ends a store's connections, calls fail as retryable, then work again."""
    # Only this store's connections are ended: other tests share the server and its database.
    tag = f"dropped_{uuid.uuid4().hex[:12]}"
    with open_store(f"{url}&application_name={tag}").unwrap() as pg_store:
        pg_store.create_session("s").unwrap()
        with psycopg.connect(url, autocommit=True) as conn:
            ended = conn.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = %s",
                (tag,),
            ).fetchone()
        assert ended is not None
        assert ended[0] >= 1
        failures = []
        for _ in range(8):
            listed = pg_store.list_sessions()
            if isinstance(listed, Success):
                break
            failures.append(listed.failure())
        assert all(isinstance(f, PostgresFailed) and f.retryable for f in failures), failures
        assert [info.id for info in pg_store.list_sessions().unwrap()] == ["s"]


@pytest.mark.parametrize(
    ("query", "tsquery"),
    [
        ("toml", "'toml'"),
        ("parse toml", "('parse' & 'toml')"),
        ("parse AND toml OR json", "(('parse' & 'toml') | 'json')"),
        ("a NOT b c", "(('a' & !'b') & 'c')"),
        ('"json.loads reads"', "('json' <-> 'loads' <-> 'reads')"),
        ("(a OR b) c", "(('a' | 'b') & 'c')"),
        ("src_dir*", "('src' <-> 'dir':*)"),
        ('"-"', "''"),
    ],
)
def test_fts5_syntax_becomes_a_tsquery(query: str, tsquery: str) -> None:
    """FTS5 operators, phrases and prefixes map to tsquery, words split as the index splits them."""
    assert translate(query).tsquery == tsquery


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("", 'syntax error near ""'),
        ("AND", 'syntax error near "AND"'),
        ("a OR", 'syntax error near ""'),
        ("(a", 'syntax error near ""'),
        ("a)", 'syntax error near ")"'),
        ("tail -n", 'syntax error near "-"'),
        ("col:word", "no such column: col"),
        ("NEAR(a b)", 'syntax error near "NEAR"'),
    ],
)
def test_bad_fts5_syntax_is_named(query: str, detail: str) -> None:
    """Each syntax error says near what, as SQLite's FTS5 does."""
    with pytest.raises(QuerySyntaxError, match=re.escape(detail)):
        translate(query)


def test_a_node_is_stored_without_a_copy_of_its_text(pg_store: Store, url: str) -> None:
    """Step 4: no ``body`` column; a hit's snippet is cut from the node's own record."""
    session = Session("s").send("user", "Where is the TOML loader?").unwrap()
    pg_store.save_session(session).unwrap()
    with psycopg.connect(url) as conn:
        columns = {row[0] for row in conn.execute("SELECT * FROM nodes LIMIT 0").description or ()}
    assert not {"body", "words"} & columns
    assert {"fixed", "output", "tsv"} <= columns
    hits = pg_store.search("loader", session_id="s").unwrap()
    assert [hit.snippet for hit in hits] == ["Where is the TOML [loader]?"]


def test_step_10_keeps_the_index_of_nodes_stored_with_their_words(url: str) -> None:
    """A node stored at step 9 (its words a column) is found after step 10 drops the column."""
    session = Session("s").send("user", "Where is the TOML loader?").unwrap()
    call = session.graph.nodes[session.head]
    sql, params = insert_statement("s", call)
    at_step_9 = sql.replace("tsv,", "words,").replace("to_tsvector('simple', ?)", "?")
    with psycopg.connect(url) as conn, conn.transaction():
        assert migrate(conn, MIGRATIONS[:9]) is None
        conn.execute("INSERT INTO sessions (id, created_at) VALUES ('s', 0)")
        conn.execute(at_step_9.replace("?", "%s"), params)
    with open_store(url).unwrap() as store:
        assert [hit.snippet for hit in store.search("loader", session_id="s").unwrap()] == [
            "Where is the TOML [loader]?"
        ]
        grown = store.load_graph("s").unwrap()
        later = Session("s", grown, session.head).send("user", "and the YAML loader").unwrap()
        store.save_session(later).unwrap()
        found = store.search("loader", session_id="s").unwrap()
    assert sorted(hit.snippet for hit in found) == [
        "Where is the TOML [loader]?",
        "and the YAML [loader]",
    ]
    with psycopg.connect(url) as conn:
        columns = {row[0] for row in conn.execute("SELECT * FROM nodes LIMIT 0").description or ()}
    assert "words" not in columns
