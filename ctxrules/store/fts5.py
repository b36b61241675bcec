"""SQLite's search: an FTS5 query over the node text index, per session or across sessions.

The index is contentless (schema step 4): it ranks, but holds no text to cut a snippet
from. The hits' text is read back from their nodes (`ctxrules.store.index_text`, as it was
indexed) and matched again in a small FTS5
table of the connection's own (``temp``), so a snippet is what FTS5 would cut. FTS5's
``snippet`` scores every window against every match, so its work grows with the square of
the matches in a text: each text goes in as chunks of at most `SNIPPET_CHUNK` characters,
and the snippet is cut from the first chunk that matches.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from returns.result import Failure, Result, Success

from ctxrules.store.errors import BadQuery, StoreError
from ctxrules.store.index_text import index_text
from ctxrules.store.rows import Rows
from ctxrules.store.schema import COMPLETED, NODE_FIELDS, OUTPUT_FIELDS, STORED_RUNNING
from ctxrules.store.search import SearchHit, best_hits
from ctxrules.store.sqlite_nodes import chunks_column, read_record

#: A node stored running had no output yet: its first row is of its name and input.
RUNNING_FIELDS = ("name", "input")
#: The fields each kind of index row was made from (``nodes_fts_rows.kind``).
KIND_FIELDS = {COMPLETED: OUTPUT_FIELDS, STORED_RUNNING: RUNNING_FIELDS}

_SELECT = """
    SELECT n.session_id, n.id, n.seq, n.role, f.rank, f.rowid, r.kind, n.data, {chunks}
    FROM nodes_fts AS f
    JOIN nodes_fts_rows AS r ON r.id = f.rowid
    JOIN nodes AS n ON n.session_id = r.session_id AND n.id = r.node_id
    WHERE nodes_fts MATCH ? {session}
    ORDER BY f.rank, n.session_id, n.seq
    LIMIT ?
"""

_SNIPPETS = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.snippets USING fts5(text)"
_CHUNKS = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.snippet_chunks USING fts5(text)"
_MATCHING = "SELECT rowid FROM temp.snippet_chunks WHERE snippet_chunks MATCH ? ORDER BY rowid"
_CUT = "SELECT rowid, snippet(snippets, 0, '[', ']', '…', 16) FROM temp.snippets WHERE snippets MATCH ?"

#: The longest piece of a hit's text one snippet is cut from (a few thousand matches at most).
SNIPPET_CHUNK = 2_000


def snippet_chunks(text: str, size: int = SNIPPET_CHUNK) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, cut after a space where there is one.

    >>> snippet_chunks("aaa bbb ccc", 5)
    ['aaa ', 'bbb ', 'ccc']
    >>> snippet_chunks("abcdefg", 3)
    ['abc', 'def', 'g']
    """
    chunks, at = [], 0
    while len(text) - at > size:
        space = text.rfind(" ", at + size // 2, at + size)
        end = space + 1 if space >= 0 else at + size
        chunks.append(text[at:end])
        at = end
    chunks.append(text[at:])
    return chunks


def _is_query_error(err: sqlite3.Error) -> bool:
    # FTS5 reports every query syntax problem as a plain SQLITE_ERROR ("fts5: syntax
    # error", "no such column", "unterminated string"); I/O and lock errors have their own.
    return err.sqlite_errorcode == sqlite3.SQLITE_ERROR and "no such table" not in str(err)


def _snippets(rows: Rows, query: str, texts: dict[int, str]) -> dict[int, str]:
    # The hits' chunks (twice the limit of texts at most) in a table of this connection's
    # temp schema, emptied before and after: the main file is not written.
    for table in (_SNIPPETS, _CHUNKS):
        rows.run(table, ())
    rows.run("DELETE FROM temp.snippets", ())
    rows.run("DELETE FROM temp.snippet_chunks", ())
    chunks: list[tuple[int, int, str]] = []
    for hit, text in texts.items():
        for number, chunk in enumerate(snippet_chunks(text)):
            chunks.append((hit, number, chunk))
            rows.run(
                "INSERT INTO temp.snippet_chunks (rowid, text) VALUES (?, ?)", (len(chunks), chunk)
            )
    # Each hit's first matching chunk, alone in the second table: one pass cuts them all.
    first: dict[int, int] = {}
    for (row,) in rows.all(_MATCHING, (query,)):
        first.setdefault(chunks[int(row) - 1][0], int(row))
    for row in first.values():
        rows.run("INSERT INTO temp.snippets (rowid, text) VALUES (?, ?)", (row, chunks[row - 1][2]))
    cut = {}
    for row, snippet in rows.all(_CUT, (query,)):
        hit, number, _ = chunks[int(row) - 1]
        shown = str(snippet)
        cut[hit] = "…" + shown if number > 0 and not shown.startswith("…") else shown
    rows.run("DELETE FROM temp.snippets", ())
    rows.run("DELETE FROM temp.snippet_chunks", ())
    # A hit whose matches fall in different chunks (an AND across them) shows its start.
    for hit, text in texts.items():
        cut.setdefault(hit, _head(text))
    return cut


def _hit_text(rows: Rows, row: tuple[Any, ...]) -> str:
    # The text the hit's index row was made from: the node's record, the fields of its kind.
    session_id, node_id, kind, data, chunks = row[0], row[1], row[6], row[7], row[8]
    record = read_record(rows, str(session_id), str(node_id), data, int(chunks))
    fields = KIND_FIELDS.get(int(kind), NODE_FIELDS)
    return index_text(record, fields) if isinstance(record, dict) else ""


def _head(text: str, words: int = 16) -> str:
    parts = text.split(maxsplit=words)
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def search(
    rows: Rows, query: str, session_id: str | None, limit: int, *, chunked: bool = True
) -> Result[list[SearchHit], StoreError]:
    """The best ``limit`` nodes for an FTS5 query, best first; ties in session and seq order."""
    scope = () if session_id is None else (session_id,)
    sql = _SELECT.format(
        session="" if session_id is None else "AND n.session_id = ?",
        chunks=chunks_column(chunked, "n."),
    )
    try:
        # A completed node has two index rows (as stored, then its output); keep its best.
        found = rows.all(sql, (query, *scope, 2 * limit))
        cut = _snippets(rows, query, {int(row[5]): _hit_text(rows, row) for row in found})
    except sqlite3.OperationalError as err:
        if _is_query_error(err):
            return Failure(BadQuery(query, str(err)))
        raise
    hits = (
        SearchHit(str(sid), str(node), int(seq), str(role), cut.get(int(rowid), ""), float(rank))
        for sid, node, seq, role, rank, rowid, *_ in found
    )
    return Success(best_hits(hits, limit))
