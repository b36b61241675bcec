"""`Rows`: the few SQL calls the backend-neutral store code makes, on either backend.

The shared layers (commit objects, blobs) write their SQL once, with ``?`` placeholders
and ``ON CONFLICT DO NOTHING``, which SQLite and PostgreSQL both read; each backend
adapts its connection (psycopg takes ``%s``) and keeps only its own SQL beside.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

#: Values bound to one statement's placeholders.
Params = Sequence[object]
#: One statement and its values.
Query = tuple[str, Params]


class Rows(Protocol):
    """One open transaction: run statements, read rows."""

    def one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row the statement returns, or None."""
        ...

    def all(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row the statement returns."""
        ...

    def run(self, sql: str, params: Params = ()) -> None:
        """Run a statement that returns no rows."""
        ...

    def many(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement once for each row of parameters."""
        ...

    def reads(self, queries: Sequence[Query]) -> list[list[tuple[Any, ...]]]:
        """Every row of each query, in order (in one round trip where the backend can)."""
        ...


class SqliteRows:
    """`Rows` over an sqlite3 connection (``?`` is its own placeholder)."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row the statement returns, or None."""
        row = self.conn.execute(sql, params).fetchone()
        return tuple(row) if row is not None else None

    def all(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row the statement returns."""
        return [tuple(row) for row in self.conn.execute(sql, params).fetchall()]

    def run(self, sql: str, params: Params = ()) -> None:
        """Run a statement that returns no rows."""
        self.conn.execute(sql, params)

    def many(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement once for each row of parameters."""
        self.conn.executemany(sql, rows)

    def reads(self, queries: Sequence[Query]) -> list[list[tuple[Any, ...]]]:
        """Every row of each query, in order."""
        return [self.all(sql, params) for sql, params in queries]


def in_batches(values: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    """``values`` in slices of at most ``size``, for ``IN (...)`` lists under bind limits.

    >>> [list(b) for b in in_batches(["a", "b", "c"], 2)]
    [['a', 'b'], ['c']]
    """
    for start in range(0, len(values), size):
        yield values[start : start + size]


def placeholders(count: int) -> str:
    """``?, ?, …`` for ``count`` values.

    >>> placeholders(3)
    '?, ?, ?'
    """
    return ", ".join("?" * count)
