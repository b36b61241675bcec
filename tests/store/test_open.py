"""Opening a store: the settings it applies, and files it must refuse without raising."""

from __future__ import annotations

import os
import random
import sqlite3
import sys
from pathlib import Path

import pytest
from returns.result import Failure, Result, Success

from ctxrules.dag import Call, Session
from ctxrules.store import (
    InvalidArgument,
    OpenFailed,
    SqliteStore,
    Store,
    StoreClosed,
    StoreError,
    open_store,
    schema,
)
from ctxrules.store.schema import SCHEMA_VERSION
from ctxrules.tokens.usage import UsageState


def test_a_new_store_uses_wal_full_sync_and_a_busy_timeout(sqlite_store: SqliteStore) -> None:
    """open() sets journal_mode=WAL, synchronous=FULL, foreign keys and a 30 s busy timeout."""
    conn = sqlite_store._conn
    assert conn is not None
    pragmas = ["journal_mode", "synchronous", "foreign_keys", "busy_timeout"]
    values = [conn.execute(f"PRAGMA {name}").fetchone()[0] for name in pragmas]
    assert values == ["wal", 2, 1, 30000]


def test_normal_sync_is_available_for_bulk_loads(db_path: Path) -> None:
    """synchronous='NORMAL' is applied when asked for."""
    with SqliteStore.open(db_path, synchronous="NORMAL", busy_timeout=1.5).unwrap() as store:
        assert store._conn is not None
        assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 1
        assert store._conn.execute("PRAGMA busy_timeout").fetchone()[0] == 1500


def test_reopening_keeps_everything(db_path: Path, session: Session) -> None:
    """A store closed and opened again holds what was written and accepts more."""
    with SqliteStore.open(db_path).unwrap() as store:
        store.create_session("s1").unwrap()
        store.append_graph("s1", session.graph).unwrap()
    with SqliteStore.open(db_path).unwrap() as store:
        assert store.load_graph("s1") == Success(session.graph)
        assert store.append_node("s1", Call("x", "user")) == Success(len(session.graph))


def test_a_file_of_random_bytes_opens_to_a_failure(tmp_path: Path) -> None:
    """A file that is not SQLite at all is OpenFailed naming the path."""
    path = tmp_path / "noise.db"
    path.write_bytes(random.Random(7).randbytes(8192))  # noqa: S311 - fixed noise
    failure = SqliteStore.open(path).failure()
    assert failure == OpenFailed(str(path), "file is not a database")
    assert failure.message == f"cannot open store {str(path)!r}: file is not a database"


def test_another_applications_database_is_refused(tmp_path: Path) -> None:
    """An SQLite file with foreign tables is not taken over."""
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE nodes (x)")
    conn.close()
    assert SqliteStore.open(path).failure() == OpenFailed(
        str(path), "the file is an SQLite database of another application, not a ctxrules store"
    )


def test_a_newer_schema_is_refused(db_path: Path) -> None:
    """A store written by a newer ctxrules (higher user_version) is refused, not guessed at."""
    SqliteStore.open(db_path).unwrap().close()
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    failure = SqliteStore.open(db_path).failure()
    assert failure == OpenFailed(
        str(db_path),
        f"schema version 99 is newer than this ctxrules ({SCHEMA_VERSION}); upgrade ctxrules",
    )


def test_an_older_store_gets_the_later_steps_on_open(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file at version 1 opened by a ctxrules with a second step is upgraded, data kept."""
    with SqliteStore.open(db_path).unwrap() as store:
        store.create_session("kept").unwrap()
    step = ("CREATE TABLE later_step (x INTEGER)",)
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, step))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", schema.SCHEMA_VERSION + 1)
    with SqliteStore.open(db_path).unwrap() as store:
        assert [info.id for info in store.list_sessions().unwrap()] == ["kept"]
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert len(schema.MIGRATIONS) == schema.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM later_step").fetchone()[0] == 0
    conn.close()


def test_a_missing_directory_opens_to_a_failure(tmp_path: Path) -> None:
    """A path whose directory does not exist is OpenFailed, not an exception."""
    path = tmp_path / "missing" / "store.db"
    assert SqliteStore.open(path).failure() == OpenFailed(str(path), "unable to open database file")


def test_a_truncated_store_never_raises(db_path: Path, session: Session) -> None:
    """A store cut short on disk opens or reads to a Failure; no call raises."""
    with SqliteStore.open(db_path).unwrap() as store:
        store.create_session("s1").unwrap()
        big = session
        for i in range(200):
            big = big.send("user", f"message {i} " * 50).unwrap()
        store.append_graph("s1", big.graph).unwrap()
    size = db_path.stat().st_size
    with db_path.open("r+b") as handle:
        handle.truncate(size // 2)
    opened = SqliteStore.open(db_path)
    if isinstance(opened, Success):
        with opened.unwrap() as store:
            results: list[Result[object, StoreError]] = [
                store.load_graph("s1"),
                store.search("message"),
                store.append_node("s1", Call("late", "user")),
            ]
        assert any(not isinstance(r, Success) for r in results)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda _: SqliteStore.open("x.db", synchronous="OFF"),
            "synchronous='OFF': expected 'FULL' or 'NORMAL'",
        ),
        (
            lambda _: SqliteStore.open("x.db", busy_timeout=-1),
            "busy_timeout=-1: expected seconds >= 0",
        ),
        (
            lambda _: SqliteStore.open("x.db", busy_timeout="5"),
            "busy_timeout='5': expected seconds >= 0",
        ),
        (lambda s: s.search("x", limit=0), "limit=0: expected an integer >= 1"),
        (lambda s: s.search("x", limit=True), "limit=True: expected an integer >= 1"),
        (lambda s: s.create_session(""), "session_id='': expected a non-empty string"),
        (
            lambda s: s.create_session("s", metadata={"k": {1, 2}}),
            "metadata.k=a value of type set: expected a JSON-like value",
        ),
        (
            lambda s: s.move_head("s", "", None, "n"),
            "name='': expected a non-empty head name such as 'main'",
        ),
    ],
)
def test_invalid_arguments(store: Store, call: object, message: str) -> None:
    """Each invalid argument is an InvalidArgument in name=value form saying what is expected."""
    failure = call(store).failure()  # type: ignore[operator]
    assert isinstance(failure, InvalidArgument)
    assert failure.message == message


def test_a_closed_store_fails_every_call(store: Store) -> None:
    """After close every operation is StoreClosed, load_usage is None, and close is idempotent."""
    store.create_session("s1").unwrap()
    store.close()
    store.close()
    assert repr(store).endswith(", closed)")
    assert store.load_graph("s1").failure() == StoreClosed("load_graph")
    assert store.search("x").failure() == StoreClosed("search")
    assert store.append_node("s1", Call("x", "user")).failure() == StoreClosed("append_node")
    assert store.load_usage("s1") is None
    store.save_usage("s1", UsageState())


def test_the_context_manager_closes(db_path: Path) -> None:
    """Leaving the with block closes the connection."""
    with SqliteStore.open(db_path).unwrap() as store:
        assert store.list_sessions() == Success([])
    assert store.list_sessions().failure() == StoreClosed("list_sessions")


def test_damaged_usage_loads_as_none(sqlite_store: SqliteStore, db_path: Path) -> None:
    """load_usage never raises: a row that is not a usage object reads as None."""
    store = sqlite_store
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute(
            "INSERT INTO usage VALUES ('s', '[1, 2]'), ('t', '{\"turn_count\": 1, \"x\": 2}')"
        )
    conn.close()
    assert store.load_usage("s") is None
    assert store.load_usage("t") == UsageState(turn_count=1)
    assert os.fspath(db_path) == store.path


def test_without_the_driver_a_postgresql_url_is_refused_with_its_password_hidden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No psycopg (the core wheel alone): the error says what to install and never the password."""
    monkeypatch.setitem(sys.modules, "ctxrules.store.postgres", None)
    opened = open_store("postgresql://agent:s3cr@t@db.internal/ctx")
    assert isinstance(opened, Failure)
    said = str(opened.failure())
    assert "pip install 'ctxrules[postgres]'" in said
    assert "agent:***@db.internal/ctx" in said
    assert "s3cr" not in said
