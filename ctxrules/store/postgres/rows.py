"""`Rows` over a psycopg connection: the shared layers' ``?`` placeholders become ``%s``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import psycopg

from ctxrules.store.rows import Params


def pg_sql(sql: str) -> str:
    """The shared layers' SQL with psycopg's placeholders."""
    # The shared SQL holds no literal '?' or '%': each '?' is a placeholder.
    return sql.replace("?", "%s")


class PgRows:
    """`Rows` over one psycopg connection, inside the caller's transaction."""

    __slots__ = ("conn",)

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row the statement returns, or None."""
        row = self.conn.execute(pg_sql(sql), params).fetchone()
        return tuple(row) if row is not None else None

    def all(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row the statement returns."""
        return [tuple(row) for row in self.conn.execute(pg_sql(sql), params).fetchall()]

    def run(self, sql: str, params: Params = ()) -> None:
        """Run a statement that returns no rows."""
        self.conn.execute(pg_sql(sql), params)

    def many(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement once for each row of parameters."""
        with self.conn.cursor() as cursor:
            cursor.executemany(pg_sql(sql), list(rows))
