"""SQLite's node rows: each node one canonical JSON record (seq included) in ``data``."""

from __future__ import annotations

from collections.abc import Iterator

from ctxrules.canonical import canonical_json
from ctxrules.dag import Call, call_to_json
from ctxrules.store.errors import row_json
from ctxrules.store.nodes import EDGES, Edge, Mark, StoredNode
from ctxrules.store.rows import Rows


class SqliteNodes:
    """The `NodeTable` of a SQLite store, inside the caller's write transaction."""

    __slots__ = ("rows",)

    def __init__(self, rows: Rows) -> None:
        self.rows = rows

    def stored(self, session_id: str, node_id: str) -> StoredNode | None:
        """The stored node with this id, or None."""
        row = self.rows.one(
            "SELECT seq, data FROM nodes WHERE session_id = ? AND id = ?", (session_id, node_id)
        )
        if row is None:
            return None
        record = row_json(row[1], "node", node_id)
        fields = record if isinstance(record, dict) else {}
        return StoredNode({k: v for k, v in fields.items() if k != "seq"}, int(row[0]))

    def insert(self, session_id: str, call: Call) -> int:
        """Insert ``call`` with the session's next seq, read under the write lock; that seq."""
        row = self.rows.one(
            "SELECT coalesce(max(seq), -1) + 1 FROM nodes WHERE session_id = ?", (session_id,)
        )
        seq = int(row[0]) if row is not None else 0
        record = {**call_to_json(call), "seq": seq}
        self.rows.run(
            "INSERT INTO nodes (session_id, id, seq, role, data) VALUES (?, ?, ?, ?, ?)",
            (session_id, call.id, seq, call.role.value, canonical_json(record)),
        )
        return seq

    def complete(self, session_id: str, node_id: str, done: StoredNode) -> None:
        """Rewrite a running node's record with its output and final status."""
        self.rows.run(
            "UPDATE nodes SET data = ? WHERE session_id = ? AND id = ?",
            (canonical_json({**done.record, "seq": done.seq}), session_id, node_id),
        )

    def edge_ids(self, session_id: str, edge: Edge, node_id: str, below: int) -> list[str]:
        """Ids of the nodes under seq ``below`` whose ``edge`` is ``node_id``, in seq order (by index)."""
        # No seq in the query: with it, the planner walks the seq index instead of the edge's.
        sql = (
            "SELECT seq, id FROM nodes WHERE session_id = ?"  # noqa: S608 - edge is one of two constants
            f" AND json_extract(data, '$.{EDGES[edge]}') = ?"
        )
        found = sorted(self.rows.all(sql, (session_id, node_id)))
        return [str(row[1]) for row in found if row[0] < below]

    def marked(self, session_id: str, mark: Mark, below: int) -> list[str]:
        """Ids of the session's running nodes, or its roots, under seq ``below`` (by partial index)."""
        where = {
            "running": "json_extract(data, '$.status') = 'running'",
            "roots": "json_extract(data, '$.predecessor') IS NULL"
            " AND json_extract(data, '$.caller') IS NULL",
        }[mark]
        sql = f"SELECT id FROM nodes WHERE session_id = ? AND {where} AND seq < ? ORDER BY seq"  # noqa: S608 - constants
        return [str(row[0]) for row in self.rows.all(sql, (session_id, below))]

    def ids(self, session_id: str, below: int) -> list[str]:
        """The session's node ids under seq ``below``, in seq order."""
        sql = "SELECT id FROM nodes WHERE session_id = ? AND seq < ? ORDER BY seq"
        return [str(row[0]) for row in self.rows.all(sql, (session_id, below))]

    def scan(self, session_id: str) -> Iterator[tuple[str, int, object]]:
        """Every node's id, seq and JSON record, in seq order."""
        found = self.rows.all(
            "SELECT id, seq, data FROM nodes WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        for node_id, seq, data in found:
            yield str(node_id), seq, row_json(data, "node", str(node_id))
