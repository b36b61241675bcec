"""The imperative shell's storage: sessions, nodes, commits and heads in SQLite.

The pure core never imports this package; `ctxrules.engine` takes a store as an argument.
"""

from ctxrules.store.errors import (
    BadQuery,
    CorruptRecord,
    DagRefused,
    HeadMoved,
    InvalidArgument,
    NodeConflict,
    OpenFailed,
    SessionExists,
    SqliteFailed,
    StoreClosed,
    StoreError,
    UnknownCommit,
    UnknownSession,
)
from ctxrules.store.search import SearchHit, literal
from ctxrules.store.sessions import SessionInfo
from ctxrules.store.sqlite import SqliteStore

__all__ = [
    "BadQuery",
    "CorruptRecord",
    "DagRefused",
    "HeadMoved",
    "InvalidArgument",
    "NodeConflict",
    "OpenFailed",
    "SearchHit",
    "SessionExists",
    "SessionInfo",
    "SqliteFailed",
    "SqliteStore",
    "StoreClosed",
    "StoreError",
    "UnknownCommit",
    "UnknownSession",
    "literal",
]
