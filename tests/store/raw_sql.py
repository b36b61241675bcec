"""Raw SQL on a store's rows, on a plain connection, without opening the store (which upgrades it)."""

from __future__ import annotations

import os
import sqlite3
from typing import Any


def raw_rows(url: str | os.PathLike[str], sql: str) -> list[tuple[Any, ...]]:
    """Every row of one query on the SQLite file or PostgreSQL URL ``url``."""
    if str(url).startswith("postgresql://"):
        import psycopg  # noqa: PLC0415 - only where PostgreSQL runs

        with psycopg.connect(str(url)) as pg:
            return [tuple(row) for row in pg.execute(sql).fetchall()]  # type: ignore[arg-type]
    conn = sqlite3.connect(url)
    try:
        return [tuple(row) for row in conn.execute(sql).fetchall()]
    finally:
        conn.close()
