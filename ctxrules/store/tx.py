"""`Tx`: one open transaction of either backend, as the shared store operations see it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import attrs
from returns.result import Failure, Result

from ctxrules.store.errors import StoreError, UnknownSession
from ctxrules.store.nodes import NodeTable
from ctxrules.store.objects import CommitReader, ItemSource, object_key
from ctxrules.store.rows import Rows
from ctxrules.store.sessions import require_session

T = TypeVar("T")


#: The session row a writer reads to hold it: SQLite's write lock already holds the file.
HOLD_SQLITE = "SELECT 1 FROM sessions WHERE id = ?"
#: PostgreSQL locks the row: writers of one session queue, others run in parallel.
HOLD_POSTGRES = "SELECT 1 FROM sessions WHERE id = ? FOR NO KEY UPDATE"


@attrs.frozen
class Tx:
    """One open transaction of a backend, as the shared operations use it.

    ``held`` is the query that readies a session for a write and finds its row (SQLite
    checks that it is stored, its write lock already holding the whole file; PostgreSQL
    locks the row); `hold` runs it. `reader` reads its commit objects.
    """

    rows: Rows
    nodes: NodeTable
    held: str
    #: How an object's digest is looked up: its 32 bytes, or the hex text of an SQLite file
    #: opened read-only before schema step 11 (not upgraded).
    keys: Callable[[str], object] = object_key

    def reader(self, *, check: bool = False, source: ItemSource | None = None) -> CommitReader:
        """A `CommitReader` of this transaction's rows, looking objects up by `keys`."""
        return CommitReader(self.rows, check=check, source=source, keys=self.keys)

    def hold(self, session_id: str) -> StoreError | None:
        """Hold the session for this write, or say why not (`UnknownSession`)."""
        found = self.rows.one(self.held, (session_id,))
        return None if found is not None else UnknownSession(session_id)


#: Work inside one transaction; a `Failure` rolls it back.
Work = Callable[[Tx], Result[T, StoreError]]

#: Work that also lists the digests of the commit objects it wrote.
FreshWork = Callable[[Tx, list[str]], Result[T, StoreError]]


def reading(session_id: str, work: Work[T]) -> Work[T]:
    """``work`` after a check that the session is stored."""

    def checked(tx: Tx) -> Result[T, StoreError]:
        missing = require_session(tx.rows, session_id)
        return Failure(missing) if missing is not None else work(tx)

    return checked


def writing(session_id: str, work: Work[T]) -> Work[T]:
    """``work`` after the session is held for writing."""

    # Hold first: every read the write bases itself on happens after the hold.
    def held(tx: Tx) -> Result[T, StoreError]:
        refused = tx.hold(session_id)
        return Failure(refused) if refused is not None else work(tx)

    return held
