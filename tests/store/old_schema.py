"""Stores of an older SQLite schema version, made by the migration steps up to it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ctxrules.store.schema import APPLICATION_ID, MIGRATIONS


def old_store(path: Path, version: int) -> sqlite3.Connection:
    """A new file at schema ``version``, open in a transaction the caller fills and commits."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for step in MIGRATIONS[:version]:
        for statement in step:
            if isinstance(statement, str):
                conn.execute(statement)
            else:
                assert statement(conn) is None
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {version}")
    return conn
