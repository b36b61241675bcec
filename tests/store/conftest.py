"""Fixtures for the store tests: a fresh store file per test and a small known session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxrules.dag import Session
from ctxrules.store import SqliteStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the test's store file lives."""
    return tmp_path / "store.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[SqliteStore]:
    """An open store on a fresh file, closed after the test."""
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
