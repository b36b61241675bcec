"""PostgreSQL's node rows: a node split into ``fixed``, ``output`` and ``status``, with its search text.

``fixed`` is the canonical JSON of every field but output, status and seq, so the
database checks a completion by comparing text. The index's ``tsv`` is written from the
text's words in the insert itself; the words are not stored beside it (migration 10).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ctxrules.canonical import canonical_json
from ctxrules.dag import Call, call_to_json
from ctxrules.rules.handles import handle_for
from ctxrules.store.errors import DamagedRow, row_json
from ctxrules.store.index_text import INDEXED_CHARS
from ctxrules.store.nodes import GraphQueries, StoredNode, fixed_text
from ctxrules.store.postgres.schema import EDGE
from ctxrules.store.postgres.words import body_text, words
from ctxrules.store.rows import Query, Rows, placeholders

#: A stored node's row, as `decode` reads it.
SELECT_STORED = "SELECT fixed, output, status, seq FROM nodes WHERE session_id = ? AND id = ?"

# The next seq is read in the insert itself: one round trip, under the session's lock.
_INSERT = (
    "INSERT INTO nodes"
    " (session_id, id, seq, role, status, fixed, output, tsv, predecessor, caller, handle)"
    " SELECT ?, ?, coalesce(max(seq), -1) + 1, ?, ?, ?, ?, to_tsvector('simple', ?), ?, ?, ?"
    " FROM nodes WHERE session_id = ? RETURNING seq"
)


# The same row with its seq given: a write that waits for nothing (`rows.WriteRows`).
_INSERT_AT = (
    "INSERT INTO nodes"
    " (session_id, id, role, status, fixed, output, tsv, predecessor, caller, handle, seq)"
    " VALUES (?, ?, ?, ?, ?, ?, to_tsvector('simple', ?), ?, ?, ?, ?)"
)


def _search_text(record: dict[str, object]) -> str:
    # The words the index reads, of the text's head only: a tsvector holds at most 1 MB, and
    # a 5 MB output made every later write of the session fail. The node keeps it whole.
    return words(body_text(record)[:INDEXED_CHARS])


def decode(node_id: str, row: Sequence[Any]) -> StoredNode:
    """A node from its row of `SELECT_STORED`; a damaged row raises `DamagedRow`."""
    fixed = row_json(row[0], "node", node_id)
    if not isinstance(fixed, dict):
        raise DamagedRow("node", node_id, "fixed is not a JSON object")
    record = {**fixed, "output": row_json(row[1], "node", node_id), "status": row[2]}
    return StoredNode(record, int(row[3]))


def insert_statement(session_id: str, call: Call) -> tuple[str, tuple[object, ...]]:
    """The INSERT of ``call`` with the session's next seq (read in the statement), and its values."""
    record = call_to_json(call)
    params = (
        session_id,
        call.id,
        call.role.value,
        call.status.value,
        fixed_text(record),
        canonical_json(record["output"]),
        _search_text(record),
        call.predecessor,
        call.caller,
        handle_for(call.id),
        session_id,
    )
    return _INSERT, params


class PgNodes(GraphQueries):
    """The `NodeTable` of a PostgreSQL store, inside a transaction holding the session's lock."""

    __slots__ = ("rows",)

    def __init__(self, rows: Rows) -> None:
        self.rows = rows

    def stored(self, session_id: str, node_id: str) -> StoredNode | None:
        """The stored node with this id, or None."""
        row = self.rows.one(SELECT_STORED, (session_id, node_id))
        return None if row is None else decode(node_id, row)

    def stored_query(self, session_id: str, ids: Sequence[str]) -> Query:
        """The query of the stored nodes among ``ids``, each row read by `stored_row`."""
        sql = (
            "SELECT fixed, output, status, seq, id FROM nodes"  # noqa: S608 - only placeholders
            f" WHERE session_id = ? AND id IN ({placeholders(len(ids))})"
        )
        return sql, (session_id, *ids)

    def stored_row(self, row: Sequence[object]) -> tuple[str, StoredNode]:
        """A row of `stored_query`: the node's id and the node."""
        return str(row[4]), decode(str(row[4]), row)

    def add(self, session_id: str, call: Call, seq: int) -> None:
        """Insert ``call`` with ``seq``, the session's next (read under the session's lock)."""
        _, params = insert_statement(session_id, call)
        self.rows.run(_INSERT_AT, (*params[:-1], seq))

    def insert(self, session_id: str, call: Call) -> int:
        """Insert ``call`` with the session's next seq; that seq."""
        row = self.rows.one(*insert_statement(session_id, call))
        return int(row[0]) if row is not None else 0

    def complete(self, session_id: str, node_id: str, done: StoredNode) -> None:
        """Set a running node's output and final status, and its search text with them."""
        self.rows.run(
            "UPDATE nodes SET output = ?, status = ?, tsv = to_tsvector('simple', ?)"
            " WHERE session_id = ? AND id = ?",
            (
                canonical_json(done.record["output"]),
                done.record["status"],
                _search_text(done.record),
                session_id,
                node_id,
            ),
        )

    def field(self, name: str) -> str:
        """The SQL of the record's field ``name`` (``predecessor`` or ``caller``): its column."""
        return name

    def edge(self) -> str:
        """The edge index's expression (schema migration 12)."""
        return EDGE

    def running(self) -> str:
        """The SQL condition of a running node: that of its partial index."""
        return "status = 'running'"

    def metadata_column(self) -> str:
        """The record's fields that never change (its metadata among them), as JSON text."""
        return "fixed"

    def metadata_of(self, node_id: str, value: object) -> Mapping[str, object]:
        """The metadata of the fixed fields' JSON."""
        fixed = row_json(value, "node", node_id)
        found = fixed.get("metadata", {}) if isinstance(fixed, dict) else None
        if not isinstance(found, dict):
            raise DamagedRow("node", node_id, "its metadata is not a JSON object")
        return found

    def scan(self, session_id: str) -> Iterator[tuple[str, int, object]]:
        """Every node's id, seq and JSON record, in seq order."""
        found = self.rows.all(
            "SELECT id, fixed, output, status, seq FROM nodes WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )
        for node_id, *row in found:
            node = decode(str(node_id), row)
            yield str(node_id), node.seq, {**node.record, "seq": node.seq}
