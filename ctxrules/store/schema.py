"""The store's tables, triggers and full-text index, created and upgraded by ordered steps.

A file records its version in ``PRAGMA user_version``; opening it applies every step of
`MIGRATIONS` after that version, in the opener's write transaction. The triggers make the contract hold for any writer, raw SQL included: nodes are
append-only except the one ``complete`` of a running node, commits never change, and
the full-text index follows every node insert and completion.
"""

from __future__ import annotations

import sqlite3

#: Marks a file as a ctxrules store (the ASCII of "ctxr" in the SQLite header).
APPLICATION_ID = 0x63747872


def _text(*fields: str) -> str:
    # The non-empty fields joined by one space: a JSON string as it is, other JSON as text.
    parts = " || ".join(
        f"coalesce(' ' || nullif(json_extract(NEW.data, '$.{field}'), ''), '')" for field in fields
    )
    return f"ltrim({parts})"


_NODE_TEXT = _text("name", "input", "output")
_OUTPUT_TEXT = _text("name", "output")

TABLES = (
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY NOT NULL,
        created_at REAL NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        metadata TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata))
    )
    """,
    """
    CREATE TABLE nodes (
        session_id TEXT NOT NULL REFERENCES sessions (id),
        id TEXT NOT NULL,
        seq INTEGER NOT NULL CHECK (seq >= 0),
        role TEXT NOT NULL,
        data TEXT NOT NULL CHECK (json_valid(data)),
        PRIMARY KEY (session_id, id),
        UNIQUE (session_id, seq)
    )
    """,
    """
    CREATE TABLE commits (
        id TEXT PRIMARY KEY NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        seq INTEGER NOT NULL CHECK (seq >= 0),
        head_node_id TEXT,
        data TEXT NOT NULL CHECK (json_valid(data)),
        UNIQUE (session_id, seq)
    )
    """,
    """
    CREATE TABLE heads (
        session_id TEXT NOT NULL REFERENCES sessions (id),
        name TEXT NOT NULL,
        node_id TEXT NOT NULL,
        PRIMARY KEY (session_id, name),
        FOREIGN KEY (session_id, node_id) REFERENCES nodes (session_id, id)
    )
    """,
    """
    CREATE TABLE usage (
        session_id TEXT PRIMARY KEY NOT NULL,
        data TEXT NOT NULL CHECK (json_valid(data))
    )
    """,
    "CREATE VIRTUAL TABLE nodes_fts USING fts5(session_id UNINDEXED, node_id UNINDEXED, text)",
    # The one allowed change to a node: a running node gets its output and a final status,
    # every other field byte-for-byte the same. A second complete finds it no longer running.
    """
    CREATE TRIGGER nodes_append_only BEFORE UPDATE ON nodes
    WHEN NOT (
        OLD.session_id IS NEW.session_id AND OLD.id IS NEW.id
        AND OLD.seq IS NEW.seq AND OLD.role IS NEW.role
        AND json_extract(OLD.data, '$.status') = 'running'
        AND json_extract(NEW.data, '$.status') IN ('done', 'error')
        AND json_remove(OLD.data, '$.output', '$.status')
            = json_remove(NEW.data, '$.output', '$.status')
    )
    BEGIN
        SELECT RAISE(ABORT, 'nodes are append-only: only a running node is completed, once');
    END
    """,
    # REPLACE would delete the old row without firing a delete trigger; refuse it up front.
    """
    CREATE TRIGGER nodes_no_replace BEFORE INSERT ON nodes
    WHEN EXISTS (
        SELECT 1 FROM nodes WHERE session_id = NEW.session_id AND (id = NEW.id OR seq = NEW.seq)
    )
    BEGIN
        SELECT RAISE(ABORT, 'nodes are append-only: this node id or seq is already stored');
    END
    """,
    """
    CREATE TRIGGER nodes_no_delete BEFORE DELETE ON nodes
    BEGIN
        SELECT RAISE(ABORT, 'nodes are append-only: a node is never deleted');
    END
    """,
    """
    CREATE TRIGGER commits_no_replace BEFORE INSERT ON commits
    WHEN EXISTS (SELECT 1 FROM commits WHERE id = NEW.id)
    BEGIN
        SELECT RAISE(ABORT, 'commits are immutable: this commit id is already stored');
    END
    """,
    """
    CREATE TRIGGER commits_no_update BEFORE UPDATE ON commits
    BEGIN
        SELECT RAISE(ABORT, 'commits are immutable: a content-addressed commit never changes');
    END
    """,
    """
    CREATE TRIGGER commits_no_delete BEFORE DELETE ON commits
    BEGIN
        SELECT RAISE(ABORT, 'commits are immutable: a content-addressed commit is never deleted');
    END
    """,
    # The index is append-only too: a completion adds a row with the output, and a search
    # keeps the best row per node.
    f"""
    CREATE TRIGGER nodes_fts_insert AFTER INSERT ON nodes
    BEGIN
        INSERT INTO nodes_fts (session_id, node_id, text)
        VALUES (NEW.session_id, NEW.id, {_NODE_TEXT});
    END
    """,  # noqa: S608 - the interpolated text is a constant of this module
    f"""
    CREATE TRIGGER nodes_fts_complete AFTER UPDATE ON nodes
    BEGIN
        INSERT INTO nodes_fts (session_id, node_id, text)
        VALUES (NEW.session_id, NEW.id, {_OUTPUT_TEXT});
    END
    """,  # noqa: S608 - see above
)


#: The schema as ordered steps: step ``i`` (0-based) takes a file from version ``i`` to
#: ``i + 1``. A change to the tables is a new step at the end, never an edit of an old one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (TABLES,)
#: The version of a fully migrated file; a newer file is refused, not guessed at.
SCHEMA_VERSION = len(MIGRATIONS)


def _upgrade(conn: sqlite3.Connection, version: int) -> None:
    # A current file is not written to: opening it stays a read.
    if version == SCHEMA_VERSION:
        return
    for step in MIGRATIONS[version:]:
        for statement in step:
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _user_tables(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return int(row[0])


def ensure_schema(conn: sqlite3.Connection) -> str | None:
    """Create the schema in an empty file or upgrade an older one; why it is refused, or None.

    Runs inside the caller's write transaction, so two processes creating the same file
    at once create it exactly once.
    """
    application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if application_id == APPLICATION_ID:
        if version > SCHEMA_VERSION:
            return (
                f"schema version {version} is newer than this ctxrules ({SCHEMA_VERSION}); "
                "upgrade ctxrules"
            )
        _upgrade(conn, version)
        return None
    if application_id != 0 or _user_tables(conn) > 0:
        return "the file is an SQLite database of another application, not a ctxrules store"
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    _upgrade(conn, 0)
    return None
