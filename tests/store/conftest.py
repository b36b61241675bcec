"""Fixtures for the store tests: every behaviour test runs on SQLite and on PostgreSQL.

The PostgreSQL server is started once per test run in a temporary folder (see
``pg_server.py``); each test gets its own schema in it, so tests never see each other's
rows. Where no PostgreSQL binaries exist, or the driver is not installed, the PostgreSQL
half is skipped with the reason.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ctxrules.dag import Session
from ctxrules.store import SqliteStore, Store, open_store

sys.path.insert(0, str(Path(__file__).parent))
import pg_server

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[pg_server.Server]:
    """One PostgreSQL server for the whole run, stopped and removed at the end."""
    yield from pg_server.running()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the test's SQLite store file lives."""
    return tmp_path / "store.db"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend under test."""
    return str(request.param)


@pytest.fixture
def store_url(backend: str, db_path: Path, request: pytest.FixtureRequest) -> str:
    """The URL of a fresh, empty store of the backend under test."""
    if backend == "sqlite":
        return str(db_path)
    return pg_server.fresh_schema_url(request.getfixturevalue("postgres_server"))


@pytest.fixture
def fresh_store_url(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Callable[[], str]:
    """Make the URL of another fresh, empty store of the backend under test, on each call."""
    made = itertools.count()
    if backend == "sqlite":
        return lambda: str(tmp_path / f"store-{next(made)}.db")
    server = request.getfixturevalue("postgres_server")
    return lambda: pg_server.fresh_schema_url(server)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """An open store on a fresh database, closed after the test."""
    opened = open_store(store_url).unwrap()
    yield opened
    opened.close()


@pytest.fixture
def sqlite_store(db_path: Path) -> Iterator[SqliteStore]:
    """An open SQLite store on a fresh file, for what only SQLite has (pragmas, the file)."""
    opened = SqliteStore.open(db_path).unwrap()
    yield opened
    opened.close()


@pytest.fixture
def session() -> Session:
    """A user question, an assistant reply with a completed tool call, and a follow-up."""
    return (
        Session("s1")
        .send("user", "How do I parse TOML in Python?", created_at=1.0)
        .bind(
            lambda s: s.send("assistant", "Use tomllib from the standard library.", created_at=2.0)
        )
        .bind(lambda s: s.record_call(s.head, "grep", {"pattern": "tomllib"}, status="running"))
        .bind(lambda s: s.complete(s.graph.order[-1], ["src/spec/load.py: import tomllib"]))
        .bind(lambda s: s.send("user", "Thanks, and for YAML?", metadata={"lang": "en"}))
        .unwrap()
    )
