"""SQLite schema step 11, PostgreSQL migration 11: items and tree nodes keyed by 32 bytes (issue 27).

Each key was its digest's 64 hex digits, in the row and again in the key's index. A store
written with hex keys (made here from a current one, its keys turned back into text and
its version set back) opens, every key becomes its 32 bytes, every commit reads back equal
and `verify` passes; the next request of its session is the one it was before.
"""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3

import pytest
from raw_sql import raw_rows

from ctxrules.cli.main import main
from ctxrules.engine.context import Context
from ctxrules.store import SqliteStore, open_store
from ctxrules.store.objects import key_digest, object_key
from ctxrules.store.packing import unpack
from ctxrules.store.schema import SCHEMA_VERSION
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

_TABLES = ("items", "trees")


def _context(url: str, clock: list[float]) -> Context:
    return Context(
        model="gpt-4o",
        window=8_000,
        store=url,
        session="loop",
        tokenizer=HeuristicCounter(),
        clock=lambda: clock[0],
    )


def _loop(url: str, turns: int) -> None:
    """A live loop long enough to age, batch and compact: trees, extensions and items."""
    clock = [1000.0]
    with _context(url, clock) as ctx:
        for turn in range(turns):
            clock[0] += 5
            ctx.add({"role": "user", "content": f"step {turn}: look at file{turn}.py"})
            ctx.record(openai_response(turn, "", [(f"c{turn}", "read", {"p": turn})], (100, 0)))
            ctx.add_tool_result(f"c{turn}", f"def f{turn}(): return {turn}\n" * (5 + turn % 40))
            ctx.openai()


def _next_request(url: str) -> object:
    with _context(url, [9000.0]) as ctx:
        ctx.add({"role": "user", "content": "go on"})
        return ctx.openai()


def _back_to_hex_keys(url: str) -> None:
    """Turn the store's keys into hex text and its version back, as the release before wrote it."""
    if url.startswith("postgresql://"):
        import psycopg  # noqa: PLC0415 - only where PostgreSQL runs

        with psycopg.connect(url) as conn, conn.transaction():
            for table in _TABLES:
                conn.execute(
                    f"ALTER TABLE {table} ALTER COLUMN digest TYPE text USING encode(digest, 'hex')"
                )
            # And migration 12's one edge index back to the two before it.
            conn.execute("DROP INDEX nodes_edge")
            conn.execute("CREATE INDEX nodes_predecessor ON nodes (session_id, predecessor)")
            conn.execute("CREATE INDEX nodes_caller ON nodes (session_id, caller)")
            conn.execute("DELETE FROM schema_version WHERE version >= 11")
        return
    conn = sqlite3.connect(url, isolation_level=None)
    conn.create_function("hex_key", 1, lambda key: key.hex())
    conn.execute("BEGIN")
    for table in _TABLES:
        conn.execute(
            f"CREATE TABLE old_{table} (digest TEXT PRIMARY KEY NOT NULL, data TEXT NOT NULL)"
        )
        conn.execute(f"INSERT INTO old_{table} SELECT hex_key(digest), data FROM {table}")  # noqa: S608
        conn.execute(f"DROP TABLE {table}")
        conn.execute(f"ALTER TABLE old_{table} RENAME TO {table}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
    conn.execute("COMMIT")
    conn.close()


def _keys(url: str, table: str) -> list[object]:
    return [key for (key,) in raw_rows(url, f"SELECT digest FROM {table}")]  # noqa: S608 - constant


def test_a_new_store_keys_its_objects_by_their_bytes(store_url: str) -> None:
    """Every item and tree node of a live loop is stored under its digest's 32 bytes."""
    _loop(store_url, 40)
    for table in _TABLES:
        keys = _keys(store_url, table)
        assert keys
        assert all(isinstance(key, bytes) and len(key) == 32 for key in keys)
    with open_store(store_url).unwrap() as store:
        commits = store.commits_for("loop").unwrap()
    named = {item.digest for commit in commits for item in commit.items}
    assert named <= {key_digest(key) for key in _keys(store_url, "items")}


def test_a_store_with_hex_keys_migrates_and_reads_back_the_same(store_url: str) -> None:
    """Hex keys become bytes; every commit reads back equal, verify passes, the next request holds."""
    _loop(store_url, 60)
    before = _next_request(store_url)
    with open_store(store_url).unwrap() as store:
        commits = store.commits_for("loop").unwrap()
    objects = {table: sorted(map(key_digest, _keys(store_url, table))) for table in _TABLES}
    _back_to_hex_keys(store_url)
    assert all(isinstance(key, str) for key in _keys(store_url, "items"))
    with open_store(store_url).unwrap() as store:
        assert store.commits_for("loop").unwrap() == commits
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["verify", store_url, "--tokenizer", "heuristic"]) == 0
    assert out.getvalue().startswith("ok:")
    for table in _TABLES:
        keys = _keys(store_url, table)
        assert all(isinstance(key, bytes) for key in keys)
        assert sorted(map(key_digest, keys)) == objects[table]
    # The request before the migration already had "go on"; this one adds it again.
    again = _next_request(store_url)
    assert isinstance(before, dict)
    assert isinstance(again, dict)
    assert again["messages"][: len(before["messages"]) - 1] == before["messages"][:-1]


@pytest.mark.parametrize("bad", ["abc", "g" * 64, b"\x01" * 31])
def test_a_key_that_is_not_a_digest_stops_the_migration(db_path: object, bad: object) -> None:
    """A key that is neither 64 hex digits nor 32 bytes is refused; the file is left as it was."""
    url = str(db_path)
    _loop(url, 5)
    _back_to_hex_keys(url)
    conn = sqlite3.connect(url)
    conn.execute("DROP TRIGGER IF EXISTS items_no_update")
    conn.execute("INSERT INTO items (digest, data) VALUES (?, 'x')", (bad,))
    conn.commit()
    conn.close()
    opened = open_store(url)
    assert "1 items rows have a key that is not a 64-digit hex digest" in str(opened.failure())
    assert raw_rows(url, "PRAGMA user_version") == [(SCHEMA_VERSION - 1,)]


@pytest.mark.parametrize("digest", ["00" * 32, "ff" * 32])
def test_a_key_is_its_digest_s_bytes(digest: str) -> None:
    """`object_key` and `key_digest` are inverse; a key stored as text reads as itself."""
    assert len(object_key(digest)) == 32
    assert key_digest(object_key(digest)) == digest
    assert key_digest(memoryview(object_key(digest))) == digest
    assert key_digest(digest) == digest


def test_the_loop_stores_commits_both_as_trees_and_as_extensions(store_url: str) -> None:
    """The loop the migration tests run makes both kinds of commit row, so both are read back."""
    _loop(store_url, 40)
    headers = [
        json.loads(unpack(data)) for (data,) in raw_rows(store_url, "SELECT data FROM commits")
    ]
    assert any(header.get("root") for header in headers)
    assert any(header.get("extends") for header in headers)
    assert len(_keys(store_url, "trees")) > 1


def test_a_store_before_the_step_opened_read_only_reads_as_it_is(db_path: object) -> None:
    """A file at version 10 opened read-only is not upgraded, and its hex keys are still read.

    `ctxrules show`, `inspect` and `verify` open a store read-only: an older file they
    are given keeps its form, and they read every commit of it.
    """
    url = str(db_path)
    _loop(url, 40)
    with open_store(url).unwrap() as store:
        commits = store.commits_for("loop").unwrap()
    _back_to_hex_keys(url)
    with SqliteStore.open(url, read_only=True).unwrap() as store:
        assert store.commits_for("loop").unwrap() == commits
        last = store.last_commit("loop", lazy=True).unwrap()
        assert last is not None
        assert list(last.items) == list(commits[-1].items)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["verify", url, "--tokenizer", "heuristic"]) == 0
        assert main(["show", url, "--", "loop"]) == 0
    assert raw_rows(url, "PRAGMA user_version") == [(SCHEMA_VERSION - 1,)]
    assert all(isinstance(key, str) for key in _keys(url, "items"))
