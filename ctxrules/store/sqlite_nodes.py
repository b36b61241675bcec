"""SQLite's node rows: each node one canonical JSON record (seq included) in ``data``.

A long output is stored beside its row, in packed pieces (`ctxrules.store.chunks`); the row keeps
the other fields and counts the pieces. Each write adds the node's full-text index row,
its text computed here from the record (`ctxrules.store.index_text`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ctxrules.canonical import canonical_json
from ctxrules.dag import Call, call_to_json
from ctxrules.dag.layered import Outline
from ctxrules.rules.handles import handle_for
from ctxrules.store.chunks import joined_output, pieces_apart
from ctxrules.store.errors import DamagedRow, row_json
from ctxrules.store.index_text import index_text
from ctxrules.store.nodes import NEXT_SEQ, GraphQueries, StoredNode, outline_of
from ctxrules.store.packing import pack
from ctxrules.store.rows import Query, Rows, placeholders
from ctxrules.store.schema import (
    COMPLETED,
    EDGE,
    NODE_FIELDS,
    OUTPUT_FIELDS,
    STORED,
    STORED_RUNNING,
)

#: Index texts by (session, node, kind of index row): a cache of what a row's record gives.
IndexTexts = dict[tuple[str, str, int], str]

_PIECES = "SELECT text FROM node_chunks WHERE session_id = ? AND node_id = ? ORDER BY n"


def chunks_column(chunked: bool, table: str = "") -> str:
    """The SQL of a node row's count of output pieces: 0 in a file older than step 5."""
    return f"{table}chunks" if chunked else "0"


def read_record(rows: Rows, session_id: str, node_id: str, data: object, chunks: int) -> object:
    """A node row's JSON record, its output read back from its pieces when it has any."""
    record = row_json(data, "node", node_id)
    if chunks == 0 or not isinstance(record, dict):
        return record
    pieces = [row[0] for row in rows.all(_PIECES, (session_id, node_id))]
    if len(pieces) != chunks:
        raise DamagedRow("node", node_id, f"{len(pieces)} of {chunks} output pieces stored")
    try:
        return {**record, "output": joined_output(pieces)}
    except ValueError as err:
        raise DamagedRow("node", node_id, f"output pieces are not JSON: {err}") from None


#: A node's edges, status and metadata as one JSON array: one parse of the row.
_OUTLINE_FIELDS = ("predecessor", "caller", "status", "metadata")
_OUTLINE = (
    "SELECT id, json_extract(data, "  # noqa: S608 - constants
    + ", ".join(f"'$.{name}'" for name in _OUTLINE_FIELDS)
    + ") FROM nodes WHERE session_id = ? AND seq < ? ORDER BY seq"
)


class SqliteNodes(GraphQueries):
    """The `NodeTable` of a SQLite store, inside the caller's write transaction."""

    __slots__ = ("chunks", "edge_index", "rows", "texts")

    def __init__(
        self,
        rows: Rows,
        *,
        chunked: bool = True,
        edge_index: bool = True,
        texts: IndexTexts | None = None,
    ) -> None:
        self.rows = rows
        #: The texts of index rows written and not indexed yet (the store's, kept across
        #: transactions so they are not read back and decoded again).
        self.texts = texts
        # Before schema step 5 (a file opened read-only) no row has pieces.
        self.chunks = chunks_column(chunked)
        # Before schema step 8 each edge had an index of its own (`GraphQueries.edge_ids`).
        self.edge_index = edge_index

    def stored(self, session_id: str, node_id: str) -> StoredNode | None:
        """The stored node with this id, or None."""
        row = self.rows.one(*self.stored_query(session_id, [node_id]))
        return None if row is None else self.stored_row(row)[1]

    def stored_query(self, session_id: str, ids: Sequence[str]) -> Query:
        """The query of the stored nodes among ``ids``, each row read by `stored_row`."""
        sql = (
            f"SELECT id, seq, data, {self.chunks}, session_id FROM nodes"  # noqa: S608 - a column name and placeholders
            f" WHERE session_id = ? AND id IN ({placeholders(len(ids))})"
        )
        return sql, (session_id, *ids)

    def stored_row(self, row: Sequence[object]) -> tuple[str, StoredNode]:
        """A row of `stored_query`: the node's id and the node."""
        node_id, seq, data, chunks, session_id = (str(row[0]), row[1], row[2], row[3], row[4])
        record = read_record(self.rows, str(session_id), node_id, data, int(str(chunks)))
        fields = record if isinstance(record, dict) else {}
        return node_id, StoredNode({k: v for k, v in fields.items() if k != "seq"}, int(str(seq)))

    def insert(self, session_id: str, call: Call) -> int:
        """Insert ``call`` with the session's next seq, read under the write lock; that seq."""
        row = self.rows.one(NEXT_SEQ, (session_id,))
        seq = int(row[0]) if row is not None else 0
        self.add(session_id, call, seq)
        return seq

    def add(self, session_id: str, call: Call, seq: int) -> None:
        """Insert ``call`` with ``seq``, the session's next (read under the write lock)."""
        record = {**call_to_json(call), "seq": seq}
        data, chunks = self._row(session_id, call.id, record)
        self.rows.run(
            "INSERT INTO nodes (session_id, id, seq, role, data, chunks, handle)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (session_id, call.id, seq, call.role.value, data, chunks, handle_for(call.id)),
        )
        kind = STORED_RUNNING if record.get("status") == "running" else STORED
        self._index(session_id, call.id, kind, index_text(record, NODE_FIELDS))

    def complete(self, session_id: str, node_id: str, done: StoredNode) -> None:
        """Rewrite a running node's record with its output and final status."""
        data, chunks = self._row(session_id, node_id, {**done.record, "seq": done.seq})
        self.rows.run(
            "UPDATE nodes SET data = ?, chunks = ? WHERE session_id = ? AND id = ?",
            (data, chunks, session_id, node_id),
        )
        self._index(session_id, node_id, COMPLETED, index_text(done.record, OUTPUT_FIELDS))

    def field(self, name: str) -> str:
        """The SQL of the record's field ``name``: the text of its expression index."""
        return f"json_extract(data, '$.{name}')"

    def edge(self) -> str | None:
        """The edge index's expression (`ctxrules.store.schema.EDGE_INDEX`), from schema step 8 on."""
        return EDGE if self.edge_index else None

    def running(self) -> str:
        """The SQL condition of a running node: that of its partial index."""
        return "json_extract(data, '$.status') = 'running'"

    def outline(self, session_id: str, below: int) -> list[Outline]:
        """Every node under seq ``below`` without its texts, in seq order (`NodeTable.outline`).

        The four fields come from one ``json_extract`` of the row (one parse of its JSON, in
        SQLite), as a JSON array.
        """
        found = []
        for node_id, fields in self.rows.all(_OUTLINE, (session_id, below)):
            key = str(node_id)
            values = row_json(fields, "node", key)
            if not isinstance(values, list) or len(values) != len(_OUTLINE_FIELDS):
                raise DamagedRow("node", key, "its outline is not four fields")
            found.append(outline_of(key, *values))
        return found

    def scan(self, session_id: str) -> Iterator[tuple[str, int, object]]:
        """Every node's id, seq and JSON record, in seq order."""
        found = self.rows.all(
            f"SELECT id, seq, data, {self.chunks} FROM nodes WHERE session_id = ? ORDER BY seq",  # noqa: S608 - see above
            (session_id,),
        )
        for node_id, seq, data, chunks in found:
            yield (
                str(node_id),
                seq,
                read_record(self.rows, session_id, str(node_id), data, int(chunks)),
            )

    def _row(self, session_id: str, node_id: str, record: dict[str, object]) -> tuple[str, int]:
        # The row's JSON and its count of pieces: a long output's pieces are stored first.
        pieces = pieces_apart(record.get("output"))
        if pieces is None:
            return canonical_json(record), 0
        chunks = 0
        for chunks, piece in enumerate(pieces, start=1):
            self.rows.run(
                "INSERT INTO node_chunks (session_id, node_id, n, text) VALUES (?, ?, ?, ?)",
                (session_id, node_id, chunks - 1, pack(piece)),
            )
        return canonical_json({k: v for k, v in record.items() if k != "output"}), chunks

    def _index(self, session_id: str, node_id: str, kind: int, text: str) -> None:
        # Only the row naming what to index: the text goes into the index with the
        # transaction's others, at the next one that syncs (`fts5.index_waiting`).
        self.rows.run(
            "INSERT INTO nodes_fts_rows (session_id, node_id, kind) VALUES (?, ?, ?)",
            (session_id, node_id, kind),
        )
        if self.texts is not None:
            self.texts[(session_id, node_id, kind)] = text
