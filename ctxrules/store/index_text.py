"""The text SQLite's full-text index holds of a node, computed from its record in Python.

It is what schema step 4's triggers computed in SQL (`ctxrules.store.schema.indexed_text_of`),
character for character, so rows indexed before and after schema step 5 rank and cut
alike: the named fields that are not null or empty, each cut to its first
`INDEXED_CHARS` characters, joined by one space, leading spaces dropped, cut again. A
string field is its text; other JSON is SQLite's text of it. Reading it here costs a slice
of the record the writer already holds; SQLite's JSON functions copied the whole row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from ctxrules.canonical import canonical_json

#: Characters of a node's text the index reads: its head. A 50 MB tool output indexed whole
#: made every later insert pay FTS5's merges of its segment (about 20 ms each); the output
#: itself stays whole in the node.
INDEXED_CHARS = 100_000

# The SQL read a row's JSON with each "\u0000" escape replaced by "\u0020" (json_extract
# stopped a string at a NUL): a NUL reads as a space, and so does the text "\u0000" after
# a backslash, as "\u0020". Both keep the length, so a field's head is its head's text.
_NUL_ESCAPE, _SPACE_ESCAPE = "\\u0000", "\\u0020"
# A head cut inside a "\u0000" still changes where the whole text would: read a few more.
_SLACK = len(_NUL_ESCAPE)


def _string_text(value: str) -> str:
    head = value[: INDEXED_CHARS + _SLACK]
    return head.replace(_NUL_ESCAPE, _SPACE_ESCAPE).replace("\x00", " ")[:INDEXED_CHARS]


def _scalar_text(value: float) -> str:
    # SQLite's own text of a number (its float formatting is not Python's).
    with sqlite3.connect(":memory:") as conn:
        row = conn.execute("SELECT json_extract(?, '$') || ''", (canonical_json(value),)).fetchone()
    return str(row[0])


def field_text(value: object) -> str:
    r"""The head of one field as the index reads it: '' for null or absent.

    >>> field_text({"pattern": "tomllib"}), field_text(True), field_text("a\x00b")
    ('{"pattern":"tomllib"}', '1', 'a b')
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return _string_text(value)
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        return str(value)
    if isinstance(value, int | float):
        return _scalar_text(value)[:INDEXED_CHARS]
    text = canonical_json(value)
    return text[: INDEXED_CHARS + _SLACK].replace(_NUL_ESCAPE, _SPACE_ESCAPE)[:INDEXED_CHARS]


def index_text(record: Mapping[str, object], fields: tuple[str, ...]) -> str:
    """What the index holds of ``record``'s ``fields`` (a node's JSON record).

    >>> index_text({"name": "grep", "input": {"pattern": "x"}, "output": ""}, ("name", "input", "output"))
    'grep {"pattern":"x"}'
    """
    parts = (field_text(record.get(field)) for field in fields)
    return "".join(" " + part for part in parts if part).lstrip(" ")[:INDEXED_CHARS]
