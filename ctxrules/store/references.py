"""The reference tracker's state kept per turn, so a resumed session need not read its history again.

``refs`` holds each indexed substring with the ids of the uncited items it names,
``cited`` the cited ids, ``ref_heads`` the head the kept state was observed up to. A turn
writes what its observation changed; a writer that did not keep the tracker it observed
from rewrites the whole state (``whole``).
"""

from __future__ import annotations

import json

import attrs
from immutables import Map
from pyrsistent import pvector
from returns.result import Result, Success

from ctxrules.rules.references import ReferenceTracker
from ctxrules.store.errors import StoreError
from ctxrules.store.rows import Rows


@attrs.frozen
class ReferencesWrite:
    """A turn's change to the kept tracker: substrings set (their sources) or dropped (None), ids cited."""

    head: str
    words: tuple[tuple[str, tuple[str, ...] | None], ...] = ()
    cited: tuple[str, ...] = ()
    whole: bool = False

    @classmethod
    def of(
        cls, tracker: ReferenceTracker, head: str, kept: ReferenceTracker | None
    ) -> ReferencesWrite | None:
        """What keeping ``tracker`` (observed up to ``head``) writes over ``kept`` (None: nothing to write).

        Only the last observation's changes when ``tracker`` was observed from ``kept``;
        else the whole state.
        """
        if tracker is kept:
            return None
        changes = tracker.changes
        if kept is not None and changes is not None and changes.base == id(kept):
            words = tuple(
                (w, tuple(s) if (s := tracker.index.get(w)) is not None else None)
                for w in sorted(changes.words)
            )
            return cls(head, words, changes.cited)
        whole = tuple((w, tuple(s)) for w, s in tracker.index.items())
        return cls(head, whole, tuple(tracker.cited), whole=True)


def put_references(rows: Rows, session_id: str, write: ReferencesWrite) -> Result[None, StoreError]:
    """Apply a turn's change to the kept tracker, in the caller's transaction."""
    if write.whole:
        rows.run("DELETE FROM refs WHERE session_id = ?", (session_id,))
        rows.run("DELETE FROM cited WHERE session_id = ?", (session_id,))
    dropped = [(session_id, w) for w, s in write.words if s is None]
    kept = [(session_id, w, json.dumps(list(s))) for w, s in write.words if s is not None]
    if dropped:
        rows.many("DELETE FROM refs WHERE session_id = ? AND word = ?", dropped)
    if kept:
        rows.many(
            "INSERT INTO refs (session_id, word, sources) VALUES (?, ?, ?)"
            " ON CONFLICT (session_id, word) DO UPDATE SET sources = excluded.sources",
            kept,
        )
    if write.cited:
        rows.many(
            "INSERT INTO cited (session_id, node_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(session_id, c) for c in write.cited],
        )
    rows.run(
        "INSERT INTO ref_heads (session_id, head) VALUES (?, ?)"
        " ON CONFLICT (session_id) DO UPDATE SET head = excluded.head",
        (session_id, write.head),
    )
    return Success(None)


def load_references(rows: Rows, session_id: str) -> tuple[str, ReferenceTracker] | None:
    """The kept tracker and the head it was observed up to, or None when none is kept."""
    head = rows.one("SELECT head FROM ref_heads WHERE session_id = ?", (session_id,))
    if head is None:
        return None
    rows_read = rows.all("SELECT word, sources FROM refs WHERE session_id = ?", (session_id,))
    # One parse of every row's list (a JSON array of arrays) rather than one per row.
    lists = json.loads("[" + ",".join(str(row[1]) for row in rows_read) + "]")
    index = Map(
        {str(row[0]): pvector(map(str, ids)) for row, ids in zip(rows_read, lists, strict=True)}
    )
    cited = Map(
        {
            str(row[0]): None
            for row in rows.all("SELECT node_id FROM cited WHERE session_id = ?", (session_id,))
        }
    )
    return str(head[0]), ReferenceTracker(index, cited)
