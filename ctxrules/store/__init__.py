"""The imperative shell's storage: sessions, nodes, commits and heads in SQLite or PostgreSQL.

The pure core never imports this package; `ctxrules.engine` takes a store as an argument.
`open_store` picks the backend from a URL; `ctxrules.store.postgres.PostgresStore` needs
the ``postgres`` extra.
"""

from ctxrules.store.copy import Copied, CopyMismatch, copy_sessions
from ctxrules.store.errors import (
    BadQuery,
    CorruptRecord,
    DagRefused,
    HeadMoved,
    InvalidArgument,
    LazyReadFailed,
    NodeConflict,
    OpenFailed,
    PostgresFailed,
    SessionExists,
    SqliteFailed,
    StoreClosed,
    StoreError,
    UnknownCommit,
    UnknownSession,
)
from ctxrules.store.protocol import Store
from ctxrules.store.search import SearchHit, literal
from ctxrules.store.sessions import SessionInfo
from ctxrules.store.sqlite import SqliteStore
from ctxrules.store.url import StoreUrl, open_store, parse_store_url

__all__ = [
    "BadQuery",
    "Copied",
    "CopyMismatch",
    "CorruptRecord",
    "DagRefused",
    "HeadMoved",
    "InvalidArgument",
    "LazyReadFailed",
    "NodeConflict",
    "OpenFailed",
    "PostgresFailed",
    "SearchHit",
    "SessionExists",
    "SessionInfo",
    "SqliteFailed",
    "SqliteStore",
    "Store",
    "StoreClosed",
    "StoreError",
    "StoreUrl",
    "UnknownCommit",
    "UnknownSession",
    "copy_sessions",
    "literal",
    "open_store",
    "parse_store_url",
]
