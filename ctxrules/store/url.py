"""`open_store`: one URL names the backend, so the API and every command take either store.

A plain path or ``sqlite:///path`` opens the embedded SQLite store; ``postgresql://...``
(or ``postgres://...``) opens the PostgreSQL store, which needs the ``postgres`` extra.
"""

from __future__ import annotations

import os
from typing import Literal

import attrs
from returns.result import Failure, Result

from ctxrules.store.errors import InvalidArgument, OpenFailed, StoreError
from ctxrules.store.protocol import Store
from ctxrules.store.redact import shown_url

Backend = Literal["sqlite", "postgresql"]

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_EXPECTED = "a file path, sqlite:///PATH or postgresql://USER@HOST/DB"


@attrs.frozen
class StoreUrl:
    """Where a store lives: its backend and what that backend opens (a path or a DSN)."""

    backend: Backend
    target: str


def parse_store_url(url: str | os.PathLike[str]) -> Result[StoreUrl, StoreError]:
    """Which backend ``url`` names, and the path or connection string to give it.

    ``sqlite:///x.db`` is relative, ``sqlite:////tmp/x.db`` absolute, as in SQLAlchemy.

    >>> parse_store_url("sqlite:////tmp/x.db").unwrap()
    StoreUrl(backend='sqlite', target='/tmp/x.db')
    >>> parse_store_url("postgresql://me@db/ctx").unwrap().backend
    'postgresql'
    >>> print(parse_store_url("redis://x").failure())
    store='redis://x': expected a file path, sqlite:///PATH or postgresql://USER@HOST/DB
    """
    text = os.fspath(url)
    if text.startswith(_POSTGRES_SCHEMES):
        return Result.from_value(StoreUrl("postgresql", text))
    if text.startswith("sqlite://"):
        path = text.removeprefix("sqlite://")
        if path in ("", "/"):
            return Result.from_value(StoreUrl("sqlite", ":memory:"))
        if not path.startswith("/"):
            return Failure(InvalidArgument("store", repr(text), _EXPECTED))
        return Result.from_value(StoreUrl("sqlite", path[1:] or ":memory:"))
    if "://" in text or not text:
        return Failure(InvalidArgument("store", repr(text), _EXPECTED))
    return Result.from_value(StoreUrl("sqlite", text))


def _open(where: StoreUrl, *, read_only: bool = False) -> Result[Store, StoreError]:
    if where.backend == "sqlite":
        from ctxrules.store.sqlite import SqliteStore  # noqa: PLC0415 - only the one asked for

        return SqliteStore.open(where.target, read_only=read_only)
    try:
        from ctxrules.store.postgres import PostgresStore  # noqa: PLC0415 - optional extra
    except ImportError as err:
        reason = f"{err}; install the driver with: pip install 'ctxrules[postgres]'"
        return Failure(OpenFailed(shown_url(where.target), reason))
    return PostgresStore.open(where.target, read_only=read_only)


def open_store(
    url: str | os.PathLike[str], *, read_only: bool = False
) -> Result[Store, StoreError]:
    """Open (or create) the store ``url`` names: a path or ``sqlite:///``, or ``postgresql://``.

    ``read_only=True`` opens an SQLite store without writing anything (see `SqliteStore.open`),
    and creates no PostgreSQL schema where none is (see `PostgresStore.open`).

    >>> with open_store("sqlite://").unwrap() as store:
    ...     store.create_session("s").unwrap()
    ...     [info.id for info in store.list_sessions().unwrap()]
    ['s']
    """
    return parse_store_url(url).bind(lambda where: _open(where, read_only=read_only))
