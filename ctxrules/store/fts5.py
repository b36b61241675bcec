"""SQLite's search: an FTS5 query over the node text index, per session or across sessions.

The index is contentless (schema step 4): it ranks, but holds no text to cut a snippet
from. The best hits are ranked first, and only their text is read back from their nodes
(`ctxrules.store.index_text`, as it was indexed; SQLite's sorter would compute the text of
every match, not only of those kept). Each
hit's text is matched again in small FTS5 tables of the connection's own (``temp``), so a
snippet is what FTS5 would cut, with the work bounded at each step:

- the text goes in as chunks of at most `SNIPPET_CHUNK` characters, in rounds of 1, 2, 4 …
  chunks per hit, until the hit's first matching chunk is found; a text that matches early
  (every hostile one) is not indexed past it, and the rounds stop after `SNIPPET_READ`
  characters in all;
- FTS5's ``snippet`` scores every window against every match (its work grows with the
  square of the matches in a chunk), so it cuts only chunks with at most `DENSE_MATCHES`
  matched words; a denser chunk is cut from its ``highlight`` (one pass) at the first match.
"""

from __future__ import annotations

import re
import sqlite3

from returns.result import Failure, Result, Success

from ctxrules.store.errors import BadQuery, StoreError
from ctxrules.store.index_text import index_text
from ctxrules.store.rows import Rows
from ctxrules.store.schema import (
    COMPLETED,
    NODE_FIELDS,
    OUTPUT_FIELDS,
    STORED_RUNNING,
)
from ctxrules.store.search import SearchHit, best_hits
from ctxrules.store.sqlite_nodes import IndexTexts, chunks_column, read_record

#: A node stored running had no output yet: its first row is of its name and input.
RUNNING_FIELDS = ("name", "input")
#: The fields each kind of index row was made from (``nodes_fts_rows.kind``).
KIND_FIELDS = {COMPLETED: OUTPUT_FIELDS, STORED_RUNNING: RUNNING_FIELDS}

_RANKED = """
    SELECT n.session_id, n.id, n.seq, n.role, f.rank, f.rowid, r.kind
    FROM nodes_fts AS f
    JOIN nodes_fts_rows AS r ON r.id = f.rowid
    JOIN nodes AS n ON n.session_id = r.session_id AND n.id = r.node_id
    WHERE nodes_fts MATCH ? {session}
    ORDER BY f.rank, n.session_id, n.seq
    LIMIT ?
"""
_RECORD = "SELECT n.data, {chunks} FROM nodes AS n WHERE n.session_id = ? AND n.id = ?"

#: Where each hit matches: rowids only (contentless), emptied by FTS5's own 'delete-all'.
_CHUNKS = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.snippet_chunks USING fts5(text, content='')"
_CHUNKS_EMPTY = "INSERT INTO temp.snippet_chunks (snippet_chunks) VALUES ('delete-all')"
_CHUNK_INSERT = "INSERT INTO temp.snippet_chunks (rowid, text) VALUES (?, ?)"
_MATCHING = "SELECT rowid FROM temp.snippet_chunks WHERE snippet_chunks MATCH ? ORDER BY rowid"
#: Each hit's first matching chunk, highlighted to count its matches.
_MARKS = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.snippet_marks USING fts5(text)"
_MARK_INSERT = "INSERT INTO temp.snippet_marks (rowid, text) VALUES (?, ?)"
_MARKED = (
    "SELECT rowid, highlight(snippet_marks, 0, char(57344), char(57345)) "
    "FROM temp.snippet_marks WHERE snippet_marks MATCH ?"
)
#: The chunks FTS5's snippet cuts: only those with few matches.
_SNIPPETS = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.snippets USING fts5(text)"
_SNIPPET_INSERT = "INSERT INTO temp.snippets (rowid, text) VALUES (?, ?)"
_CUT = "SELECT rowid, snippet(snippets, 0, '[', ']', '…', 16) FROM temp.snippets WHERE snippets MATCH ?"

#: The longest piece of a hit's text one snippet is cut from.
SNIPPET_CHUNK = 2_000
#: Characters of the hits' text one search indexes to find where each matches; a hit not
#: reached within them shows its start (ordinary hits are read whole: 20 of 100,000).
SNIPPET_READ = 2_000_000
#: Matched words in a chunk above which FTS5's snippet (square in the matches) is not used.
DENSE_MATCHES = 128
#: Words a snippet shows, as FTS5's is asked for.
SNIPPET_WORDS = 16

#: What highlight puts around a match (private-use characters, mapped to brackets after).
_OPEN, _CLOSE = "\ue000", "\ue001"
_MARKED_SPAN = re.compile(f"{_OPEN}(.*?){_CLOSE}", re.DOTALL)
_WORD = re.compile(r"[^\W_]+")


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


def matched_words(marked: str) -> int:
    """How many words of a highlighted text lie inside its marks.

    >>> matched_words("x \ue000a b\ue001 c \ue000d\ue001")
    3
    """
    return sum(len(_WORD.findall(span)) for span in _MARKED_SPAN.findall(marked))


def cut_at_first_match(marked: str, words: int = SNIPPET_WORDS) -> str:
    """``words`` words of a highlighted text from its first match, marks as brackets.

    >>> cut_at_first_match("x y \ue000a\ue001 \ue000a\ue001 z", 2)
    '…[a] [a]…'
    """
    start = max(marked.find(_OPEN), 0)
    end = len(marked)
    for count, word in enumerate(_WORD.finditer(marked, start), 1):
        if count == words:
            end = word.end()
            break
    shown = marked[start:end]
    # A match the cut ends inside is closed.
    if shown.rfind(_OPEN) > shown.rfind(_CLOSE):
        shown += _CLOSE
    shown = shown.replace(_OPEN, "[").replace(_CLOSE, "]")
    return ("…" if start > 0 else "") + shown + ("…" if end < len(marked) else "")


def _is_query_error(err: sqlite3.Error) -> bool:
    # FTS5 reports every query syntax problem as a plain SQLITE_ERROR ("fts5: syntax
    # error", "no such column", "unterminated string"); I/O and lock errors have their own.
    return err.sqlite_errorcode == sqlite3.SQLITE_ERROR and "no such table" not in str(err)


def _first_matching_chunks(rows: Rows, query: str, chunks: dict[int, list[str]]) -> dict[int, int]:
    """Each hit's first chunk that matches ``query``, found in rounds of 1, 2, 4 … chunks per hit."""
    rows.run(_CHUNKS, ())
    first: dict[int, int] = {}
    start = dict.fromkeys(chunks, 0)
    room, batch = SNIPPET_READ, 1
    while start and room > 0:
        rows.run(_CHUNKS_EMPTY, ())
        placed: list[tuple[int, int]] = []
        for hit, at in start.items():
            for number in range(at, min(at + batch, len(chunks[hit]))):
                if room <= 0:
                    break
                room -= len(chunks[hit][number])
                placed.append((hit, number))
                rows.run(_CHUNK_INSERT, (len(placed), chunks[hit][number]))
        for (row,) in rows.all(_MATCHING, (query,)):
            hit, number = placed[int(row) - 1]
            first.setdefault(hit, number)
        reached = {hit: number + 1 for hit, number in placed}
        start = {
            hit: reached[hit]
            for hit in start
            if hit not in first and hit in reached and reached[hit] < len(chunks[hit])
        }
        batch *= 2
    rows.run(_CHUNKS_EMPTY, ())
    return first


def _cut(rows: Rows, query: str, pieces: dict[int, str]) -> dict[int, str]:
    """A snippet of each piece: FTS5's where it has few matches, from its first match where many."""
    rows.run(_MARKS, ())
    rows.run(_SNIPPETS, ())
    rows.many(_MARK_INSERT, pieces.items())
    dense: dict[int, str] = {}
    for row, marked in rows.all(_MARKED, (query,)):
        if matched_words(str(marked)) > DENSE_MATCHES:
            dense[int(row)] = cut_at_first_match(str(marked))
    rows.run("DELETE FROM temp.snippet_marks", ())
    rows.many(_SNIPPET_INSERT, ((hit, piece) for hit, piece in pieces.items() if hit not in dense))
    cut = {int(row): str(snippet) for row, snippet in rows.all(_CUT, (query,))}
    rows.run("DELETE FROM temp.snippets", ())
    return cut | dense


def _snippets(rows: Rows, query: str, texts: dict[int, str]) -> dict[int, str]:
    # Temp tables of this connection, emptied after use: the main file is not written.
    if not texts:
        return {}
    chunks = {hit: snippet_chunks(text) for hit, text in texts.items()}
    first = _first_matching_chunks(rows, query, chunks)
    cut = _cut(rows, query, {hit: chunks[hit][number] for hit, number in first.items()})
    for hit, number in first.items():
        if number > 0 and hit in cut and not cut[hit].startswith("…"):
            cut[hit] = "…" + cut[hit]
    # A hit whose matches fall in different chunks (an AND across them), or that was not
    # reached within SNIPPET_READ, shows its start.
    for hit, text in texts.items():
        cut.setdefault(hit, _head(text))
    return cut


def _head(text: str, words: int = 16) -> str:
    parts = text.split(maxsplit=words)
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def _hit_text(rows: Rows, sql: str, session_id: str, node_id: str, kind: int) -> str:
    # The text the hit's index row was made from: the node's record, the fields of its kind.
    found = rows.one(sql, (session_id, node_id))
    if found is None:
        return ""
    record = read_record(rows, session_id, node_id, found[0], int(found[1]))
    fields = KIND_FIELDS.get(kind, NODE_FIELDS)
    return index_text(record, fields) if isinstance(record, dict) else ""


#: The index rows waiting for their text to go into the index: those above the highest
#: rowid it holds. It is filled in rowid order, one transaction at a time, so every row at
#: or below that one is in it (FTS5 keeps a row's size under its rowid in ``_docsize``).
_WAITING = """
    SELECT id, session_id, node_id, kind FROM nodes_fts_rows
    WHERE id > (SELECT coalesce(max(id), 0) FROM nodes_fts_docsize)
    ORDER BY id
"""
_ANY_WAITING = """
    SELECT 1 FROM nodes_fts_rows
    WHERE id > (SELECT coalesce(max(id), 0) FROM nodes_fts_docsize) LIMIT 1
"""


def index_waiting(rows: Rows, texts: IndexTexts | None = None) -> int:
    """Put the text of every index row waiting into the index, in rowid order; how many.

    A row's text is what its node's record gives for its kind (as `search` reads it back);
    ``texts`` holds those of rows this process wrote, so their records are not decoded.
    """
    waiting = rows.all(_WAITING)
    if not waiting:
        return 0
    known = texts if texts is not None else {}
    record_sql = _RECORD.format(chunks=chunks_column(chunked=True, table="n."))
    indexed = []
    for rowid, sid, node, kind in waiting:
        text = known.get((str(sid), str(node), int(kind)))
        if text is None:
            text = _hit_text(rows, record_sql, str(sid), str(node), int(kind))
        indexed.append((int(rowid), text))
    rows.many("INSERT INTO nodes_fts (rowid, text) VALUES (?, ?)", indexed)
    if texts is not None:
        texts.clear()
    return len(indexed)


def any_waiting(rows: Rows) -> bool:
    """Whether an index row waits for its text (`index_waiting`)."""
    return rows.one(_ANY_WAITING) is not None


def search(
    rows: Rows, query: str, session_id: str | None, limit: int, *, chunked: bool = True
) -> Result[list[SearchHit], StoreError]:
    """The best ``limit`` nodes for an FTS5 query, best first; ties in session and seq order."""
    scope = () if session_id is None else (session_id,)
    sql = _RANKED.format(session="" if session_id is None else "AND n.session_id = ?")
    try:
        # A completed node has two index rows (as stored, then its output); keep its best.
        found = rows.all(sql, (query, *scope, 2 * limit))
        record_sql = _RECORD.format(chunks=chunks_column(chunked, "n."))
        texts = {
            int(rowid): _hit_text(rows, record_sql, str(sid), str(node), int(kind))
            for sid, node, _seq, _role, _rank, rowid, kind in found
        }
        cut = _snippets(rows, query, texts)
    except sqlite3.OperationalError as err:
        if _is_query_error(err):
            return Failure(BadQuery(query, str(err)))
        raise
    hits = (
        SearchHit(str(sid), str(node), int(seq), str(role), cut.get(int(rowid), ""), float(rank))
        for sid, node, seq, role, rank, rowid, _ in found
    )
    return Success(best_hits(hits, limit))
