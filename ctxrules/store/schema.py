"""The store's tables, triggers and full-text index, created and upgraded by ordered steps.

A file records its version in ``PRAGMA user_version``; opening it applies every step of
`MIGRATIONS` after that version, in the opener's write transaction. The triggers make the
contract hold for any writer, raw SQL included: nodes are append-only except the one
``complete`` of a running node, and commits never change. The full-text index follows
every node the store's own code writes (since step 5; before, triggers wrote it).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ctxrules.store.index_text import INDEXED_CHARS
from ctxrules.store.objects import rewrite_inline
from ctxrules.store.rows import SqliteRows

#: One statement of a step, or a function run in the step's transaction that returns why
#: the step cannot go on (None when it went through).
Statement = str | Callable[[sqlite3.Connection], str | None]

#: Marks a file as a ctxrules store (the ASCII of "ctxr" in the SQLite header).
APPLICATION_ID = 0x63747872


def text_of(row: str, *fields: str) -> str:
    """SQL for the indexed text of a node row's ``fields`` (``row`` is ``NEW`` or a table alias)."""
    # The non-empty fields joined by one space: a JSON string as it is, other JSON as text.
    # json_extract stops a string at a NUL, so the tokenizer would index nothing after it:
    # the escape is read as a space (a "\\u0000" written as text becomes "\\u0020", also valid).
    data = f"replace({row}.data, '\\u0000', '\\u0020')"
    parts = " || ".join(
        f"coalesce(' ' || nullif(json_extract({data}, '$.{field}'), ''), '')" for field in fields
    )
    return f"ltrim({parts})"


def indexed_text_of(row: str, *fields: str) -> str:
    """SQL for the part of a node row's ``fields`` the index reads: the first `INDEXED_CHARS`."""
    # As `text_of`, but the row's JSON is copied once (the NUL escapes replaced) in a
    # subquery and each field is cut before the fields are joined: on a 50 MB output the
    # per-field copies and joins of the whole text were most of a write's memory.
    parts = " || ".join(
        f"coalesce(' ' || nullif(substr(json_extract(d, '$.{field}'), 1, {INDEXED_CHARS}), ''), '')"
        for field in fields
    )
    unescaped = f"replace({row}.data, '\\u0000', '\\u0020')"
    cut = f"substr(ltrim({parts}), 1, {INDEXED_CHARS})"
    return f"(SELECT {cut} FROM (SELECT {unescaped} AS d LIMIT 1))"  # noqa: S608 - constants


#: What the index holds of a node when it is stored, and of its output when it completes.
NODE_FIELDS, OUTPUT_FIELDS = ("name", "input", "output"), ("name", "output")
#: What a row of the index was made from (``nodes_fts_rows.kind``): a node stored whole, its
#: output when it completed, a node stored running (its output came later, in its own row).
STORED, COMPLETED, STORED_RUNNING = 0, 1, 2
_NODE_TEXT = text_of("NEW", *NODE_FIELDS)
_OUTPUT_TEXT = text_of("NEW", *OUTPUT_FIELDS)

#: Commits are immutable: a second row with an id, and a delete, are refused (their update
#: guard is `_COMMITS_NO_UPDATE`); made again when step 10 rebuilds the table.
_COMMITS_NO_REPLACE = """
    CREATE TRIGGER commits_no_replace BEFORE INSERT ON commits
    WHEN EXISTS (SELECT 1 FROM commits WHERE id = NEW.id)
    BEGIN
        SELECT RAISE(ABORT, 'commits are immutable: this commit id is already stored');
    END
    """
_COMMITS_NO_DELETE = """
    CREATE TRIGGER commits_no_delete BEFORE DELETE ON commits
    BEGIN
        SELECT RAISE(ABORT, 'commits are immutable: a content-addressed commit is never deleted');
    END
    """

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
    _COMMITS_NO_REPLACE,
    """
    CREATE TRIGGER commits_no_update BEFORE UPDATE ON commits
    BEGIN
        SELECT RAISE(ABORT, 'commits are immutable: a content-addressed commit never changes');
    END
    """,
    _COMMITS_NO_DELETE,
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


#: Offloaded originals (issue 17): whole texts kept content-addressed, and which handle of
#: which session names each. Blobs are immutable; a handle maps to one blob forever.
BLOB_TABLES = (
    """
    CREATE TABLE blobs (
        digest TEXT PRIMARY KEY NOT NULL,
        chars INTEGER NOT NULL CHECK (chars >= 0),
        text TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE offloads (
        session_id TEXT NOT NULL REFERENCES sessions (id),
        handle TEXT NOT NULL,
        digest TEXT NOT NULL REFERENCES blobs (digest),
        PRIMARY KEY (session_id, handle)
    )
    """,
    """
    CREATE TRIGGER blobs_immutable BEFORE UPDATE ON blobs
    BEGIN
        SELECT RAISE(ABORT, 'blobs are content-addressed: a blob never changes');
    END
    """,
    """
    CREATE TRIGGER offloads_immutable BEFORE UPDATE ON offloads
    BEGIN
        SELECT RAISE(ABORT, 'offloads are append-only: a handle names one blob forever');
    END
    """,
)

_COMMITS_NO_UPDATE = """
    CREATE TRIGGER commits_no_update BEFORE UPDATE ON commits
    BEGIN
        SELECT RAISE(ABORT, 'commits are immutable: a content-addressed commit never changes');
    END
    """


def _no_change(table: str, what: str) -> tuple[str, str]:
    return (
        f"""
        CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table}
        BEGIN
            SELECT RAISE(ABORT, '{table} are content-addressed: {what} never changes');
        END
        """,
        f"""
        CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
        BEGIN
            SELECT RAISE(ABORT, '{table} are content-addressed: {what} is never deleted');
        END
        """,
    )


def _rewrite_commits(conn: sqlite3.Connection) -> str | None:
    return rewrite_inline(SqliteRows(conn))


#: Commits as shared objects (issue 27): items stored once, the vector's chunks and the
#: tree nodes above them by digest; a commit row keeps its header and its tree's root.
#: Rows of the first form are rewritten (each read back and its id compared).
OBJECT_TABLES: tuple[Statement, ...] = (
    "CREATE TABLE items (digest TEXT PRIMARY KEY NOT NULL, data TEXT NOT NULL)",
    "CREATE TABLE trees (digest TEXT PRIMARY KEY NOT NULL, data TEXT NOT NULL)",
    *_no_change("items", "an item"),
    *_no_change("trees", "a tree node"),
    "DROP TRIGGER commits_no_update",
    _rewrite_commits,
    _COMMITS_NO_UPDATE,
)

#: The text index without a copy of the text (issue 27: the copy was a quarter of a store).
#: A contentless FTS5 table keeps only the index; ``nodes_fts_rows`` names the node each
#: index row is of, under an
#: INTEGER PRIMARY KEY so that VACUUM keeps the ids; a search reads its hits' text back
#: from the nodes themselves (``kind``: which fields the row was made from).
CONTENTLESS_INDEX: tuple[Statement, ...] = (
    "DROP TRIGGER nodes_fts_insert",
    "DROP TRIGGER nodes_fts_complete",
    "DROP TABLE nodes_fts",
    "CREATE VIRTUAL TABLE nodes_fts USING fts5(text, content='')",
    """
    CREATE TABLE nodes_fts_rows (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        node_id TEXT NOT NULL,
        kind INTEGER NOT NULL CHECK (kind IN (0, 1, 2))
    )
    """,
    """
    INSERT INTO nodes_fts_rows (session_id, node_id, kind)
    SELECT session_id, id, 0 FROM nodes ORDER BY session_id, seq
    """,
    f"""
    INSERT INTO nodes_fts (rowid, text)
    SELECT r.id, {indexed_text_of("n", *NODE_FIELDS)}
    FROM nodes_fts_rows AS r JOIN nodes AS n ON n.session_id = r.session_id AND n.id = r.node_id
    """,  # noqa: S608 - the interpolated text is a constant of this module
    f"""
    CREATE TRIGGER nodes_fts_insert AFTER INSERT ON nodes
    BEGIN
        INSERT INTO nodes_fts_rows (session_id, node_id, kind) VALUES (
            NEW.session_id, NEW.id, iif(json_extract(NEW.data, '$.status') = 'running', 2, 0)
        );
        INSERT INTO nodes_fts (rowid, text) VALUES (last_insert_rowid(), {indexed_text_of("NEW", *NODE_FIELDS)});
    END
    """,  # noqa: S608 - see above
    f"""
    CREATE TRIGGER nodes_fts_complete AFTER UPDATE ON nodes
    BEGIN
        INSERT INTO nodes_fts_rows (session_id, node_id, kind) VALUES (NEW.session_id, NEW.id, 1);
        INSERT INTO nodes_fts (rowid, text) VALUES (last_insert_rowid(), {indexed_text_of("NEW", *OUTPUT_FIELDS)});
    END
    """,  # noqa: S608 - see above
)

#: Huge outputs beside their rows, and the index written by the store's code (issue 28).
#: A node row's ``chunks`` counts the pieces of its output in ``node_chunks`` (0: the
#: output, if any, is in ``data``); pieces are added before the row that counts them and
#: never change. The index rows are now written by `ctxrules.store.sqlite_nodes` from the
#: record it holds (`ctxrules.store.index_text`, the same text the dropped triggers made):
#: the triggers' JSON functions copied a 50 MB row several times. The append-only guard
#: reads only rows whose output is at most a piece long.
CHUNKED_OUTPUTS: tuple[Statement, ...] = (
    "DROP TRIGGER nodes_fts_insert",
    "DROP TRIGGER nodes_fts_complete",
    "ALTER TABLE nodes ADD COLUMN chunks INTEGER NOT NULL DEFAULT 0 CHECK (chunks >= 0)",
    """
    CREATE TABLE node_chunks (
        session_id TEXT NOT NULL,
        node_id TEXT NOT NULL,
        n INTEGER NOT NULL CHECK (n >= 0),
        text TEXT NOT NULL,
        PRIMARY KEY (session_id, node_id, n)
    )
    """,
    """
    CREATE TRIGGER node_chunks_append_only BEFORE INSERT ON node_chunks
    WHEN EXISTS (
        SELECT 1 FROM node_chunks
        WHERE session_id = NEW.session_id AND node_id = NEW.node_id AND n = NEW.n
    ) OR EXISTS (
        SELECT 1 FROM nodes WHERE session_id = NEW.session_id AND id = NEW.node_id AND chunks > 0
    )
    BEGIN
        SELECT RAISE(ABORT, 'nodes are append-only: a stored output never changes');
    END
    """,
    """
    CREATE TRIGGER node_chunks_no_update BEFORE UPDATE ON node_chunks
    BEGIN
        SELECT RAISE(ABORT, 'nodes are append-only: a stored output never changes');
    END
    """,
    """
    CREATE TRIGGER node_chunks_no_delete BEFORE DELETE ON node_chunks
    BEGIN
        SELECT RAISE(ABORT, 'nodes are append-only: a stored output never changes');
    END
    """,
    # A row counts exactly the pieces stored before it.
    """
    CREATE TRIGGER nodes_chunks_stored BEFORE INSERT ON nodes
    WHEN NEW.chunks != (
        SELECT count(*) FROM node_chunks WHERE session_id = NEW.session_id AND node_id = NEW.id
    )
    BEGIN
        SELECT RAISE(ABORT, 'nodes: chunks must count the pieces of the output stored before');
    END
    """,
    "DROP TRIGGER nodes_append_only",
    """
    CREATE TRIGGER nodes_append_only BEFORE UPDATE ON nodes
    WHEN NOT (
        OLD.session_id IS NEW.session_id AND OLD.id IS NEW.id
        AND OLD.seq IS NEW.seq AND OLD.role IS NEW.role AND OLD.chunks = 0
        AND NEW.chunks = (
            SELECT count(*) FROM node_chunks WHERE session_id = NEW.session_id AND node_id = NEW.id
        )
        AND json_extract(OLD.data, '$.status') = 'running'
        AND json_extract(NEW.data, '$.status') IN ('done', 'error')
        AND json_remove(OLD.data, '$.output', '$.status')
            = json_remove(NEW.data, '$.output', '$.status')
    )
    BEGIN
        SELECT RAISE(ABORT, 'nodes are append-only: only a running node is completed, once');
    END
    """,
)

#: What a resumed session reads instead of its whole history (issue 27): the edges, running
#: nodes and roots of a session by index (a graph read on demand), and the reference
#: tracker's state, kept per turn (``refs``: a substring's uncited sources; ``cited``; and
#: ``ref_heads``: the head the kept state was observed up to).
RESUME_STATE: tuple[Statement, ...] = (
    "CREATE INDEX nodes_predecessor ON nodes (session_id, json_extract(data, '$.predecessor'))",
    "CREATE INDEX nodes_caller ON nodes (session_id, json_extract(data, '$.caller'))",
    """
    CREATE INDEX nodes_running ON nodes (session_id, seq)
    WHERE json_extract(data, '$.status') = 'running'
    """,
    """
    CREATE INDEX nodes_roots ON nodes (session_id, seq)
    WHERE json_extract(data, '$.predecessor') IS NULL AND json_extract(data, '$.caller') IS NULL
    """,
    """
    CREATE TABLE refs (
        session_id TEXT NOT NULL REFERENCES sessions (id),
        word TEXT NOT NULL,
        sources TEXT NOT NULL,
        PRIMARY KEY (session_id, word)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE cited (
        session_id TEXT NOT NULL REFERENCES sessions (id),
        node_id TEXT NOT NULL,
        PRIMARY KEY (session_id, node_id)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE ref_heads (
        session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions (id),
        head TEXT NOT NULL
    )
    """,
)


def _fill_handles(conn: sqlite3.Connection) -> str | None:
    from ctxrules.rules.handles import handle_for  # noqa: PLC0415 - only this step hashes

    rows = conn.execute("SELECT session_id, id FROM nodes WHERE handle IS NULL").fetchall()
    conn.executemany(
        "UPDATE nodes SET handle = ? WHERE session_id = ? AND id = ?",
        [(handle_for(node_id), session_id, node_id) for session_id, node_id in rows],
    )
    return None


#: Each node's recall handle, by index: a resumed session answers its first ``recall``
#: from the rows that hold the handle, not by hashing every stored node's id. Rows stored
#: before this step get theirs when the step runs.
NODE_HANDLES: tuple[Statement, ...] = (
    "ALTER TABLE nodes ADD COLUMN handle TEXT",
    # The trigger that would refuse it goes first: filling the column is the one change a
    # stored node ever gets.
    "DROP TRIGGER nodes_append_only",
    _fill_handles,
    "CREATE INDEX nodes_handle ON nodes (session_id, handle)",
    str(CHUNKED_OUTPUTS[-1]).replace(
        "AND OLD.seq IS NEW.seq AND OLD.role IS NEW.role",
        "AND OLD.seq IS NEW.seq AND OLD.role IS NEW.role AND OLD.handle IS NEW.handle",
    ),
)
#: The edge a node hangs by, predecessor or caller (a node never has both), as one expression.
EDGE = "coalesce(json_extract(data, '$.predecessor'), json_extract(data, '$.caller'))"

#: One index for both edges (issue 27): a node has a predecessor or a caller, never both,
#: so one index of the edge it has finds the children and the callees of a node alike.
#: With two, each node's write (and a completion's, which rewrites ``data``) changed a
#: page of each: about five of the ~54 log pages an agent turn wrote.
EDGE_INDEX: tuple[Statement, ...] = (
    "DROP INDEX nodes_predecessor",
    "DROP INDEX nodes_caller",
    f"CREATE INDEX nodes_edge ON nodes (session_id, {EDGE})",
)
#: Commit rows may extend their parent (its id and the added items' digests) instead of
#: naming a tree (`objects.write_commit`). No table changes; the version says that an
#: older ctxrules, which cannot read such a row, must refuse the file rather than misread it.
COMMIT_EXTENSIONS: tuple[Statement, ...] = ()
#: Rows packed (`ctxrules.store.packing`), each a BLOB in its column (SQLite keeps a BLOB
#: as it is): every item row, tree node (its digests in binary) and commit row, and every
#: output longer than `ctxrules.store.chunks.PACK_FROM`, now stored in ``node_chunks``
#: (before, only outputs over a piece were, as text). Rows stored before stay as they are.
#: ``commits`` is rebuilt without its JSON check (a packed row is not JSON), its rows
#: copied as they are and its triggers made again; no other table changes. The version
#: makes an older ctxrules, which cannot read a packed row, refuse the file.
PACKED_ROWS: tuple[Statement, ...] = (
    """
    CREATE TABLE commits_packed (
        id TEXT PRIMARY KEY NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        seq INTEGER NOT NULL CHECK (seq >= 0),
        head_node_id TEXT,
        data NOT NULL,
        UNIQUE (session_id, seq)
    )
    """,
    (
        "INSERT INTO commits_packed (id, session_id, seq, head_node_id, data)"
        " SELECT id, session_id, seq, head_node_id, data FROM commits ORDER BY rowid"
    ),
    "DROP TABLE commits",
    "ALTER TABLE commits_packed RENAME TO commits",
    _COMMITS_NO_REPLACE,
    _COMMITS_NO_DELETE,
    _COMMITS_NO_UPDATE,
)


def _stored_key(digest: str | bytes) -> bytes:
    # Keys of schema step 3's rewrite and of every write before step 11 are hex text; a
    # file whose version was set back by hand may hold some already in bytes.
    return bytes.fromhex(digest) if isinstance(digest, str) else digest


def _binary_keys(conn: sqlite3.Connection) -> str | None:
    """Rebuild ``items`` and ``trees`` keyed by each digest's 32 bytes; the reason to stop, or None."""
    conn.create_function("ctxrules_key", 1, _stored_key, deterministic=True)
    try:
        for table, what in (("items", "an item"), ("trees", "a tree node")):
            bad = conn.execute(
                f"SELECT count(*) FROM {table} WHERE CASE typeof(digest)"  # noqa: S608 - constant
                " WHEN 'text' THEN length(digest) != 64 OR digest GLOB '*[^0-9a-f]*'"
                " WHEN 'blob' THEN length(digest) != 32 ELSE 1 END"
            ).fetchone()
            if bad is not None and bad[0]:
                return f"{bad[0]} {table} rows have a key that is not a 64-digit hex digest"
            conn.execute(
                f"CREATE TABLE {table}_keyed (digest BLOB PRIMARY KEY NOT NULL, data NOT NULL)"
            )
            conn.execute(
                f"INSERT INTO {table}_keyed (digest, data)"  # noqa: S608 - constant tables
                f" SELECT ctxrules_key(digest), data FROM {table} ORDER BY rowid"
            )
            conn.execute(f"DROP TABLE {table}")
            conn.execute(f"ALTER TABLE {table}_keyed RENAME TO {table}")
            for statement in _no_change(table, what):
                conn.execute(statement)
    finally:
        conn.create_function("ctxrules_key", 1, None)
    return None


#: Items and tree nodes keyed by their digests' 32 bytes, not 64 hex digits (issue 27):
#: the key is in each row and again in the key's index, so this halves both, 6 % of a
#: store of small outputs. Both tables are rebuilt, their rows copied as they are and
#: their triggers made again; the version makes an older ctxrules refuse the file.
BINARY_KEYS: tuple[Statement, ...] = (_binary_keys,)
#: The schema as ordered steps: step ``i`` (0-based) takes a file from version ``i`` to
#: ``i + 1``. A change to the tables is a new step at the end, never an edit of an old one.
MIGRATIONS: tuple[tuple[Statement, ...], ...] = (
    TABLES,
    BLOB_TABLES,
    OBJECT_TABLES,
    CONTENTLESS_INDEX,
    CHUNKED_OUTPUTS,
    RESUME_STATE,
    NODE_HANDLES,
    EDGE_INDEX,
    COMMIT_EXTENSIONS,
    PACKED_ROWS,
    BINARY_KEYS,
)
#: The first version whose node rows have ``chunks`` (output pieces in ``node_chunks``).
CHUNKED_VERSION = MIGRATIONS.index(CHUNKED_OUTPUTS) + 1
#: The first version with one index of both edges (`EDGE_INDEX`).
EDGE_VERSION = MIGRATIONS.index(EDGE_INDEX) + 1
#: The first version whose items and tree nodes are keyed by their digests' bytes.
BINARY_KEYS_VERSION = MIGRATIONS.index(BINARY_KEYS) + 1
#: The version of a fully migrated file; a newer file is refused, not guessed at.
SCHEMA_VERSION = len(MIGRATIONS)


def _upgrade(conn: sqlite3.Connection, version: int) -> str | None:
    # A current file is not written to: opening it stays a read.
    if version == SCHEMA_VERSION:
        return None
    for step in MIGRATIONS[version:]:
        for statement in step:
            if isinstance(statement, str):
                conn.execute(statement)
            elif (refused := statement(conn)) is not None:
                return f"migrating to schema version {SCHEMA_VERSION}: {refused}"
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return None


def _user_tables(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return int(row[0])


def check_schema(conn: sqlite3.Connection) -> str | None:
    """Why an existing file is not a store this ctxrules can read, or None; writes nothing."""
    application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if application_id == APPLICATION_ID:
        if version > SCHEMA_VERSION:
            return (
                f"schema version {version} is newer than this ctxrules ({SCHEMA_VERSION}); "
                "upgrade ctxrules"
            )
        return None
    if application_id == 0 and _user_tables(conn) == 0:
        return "the file is empty: not a ctxrules store"
    return "the file is an SQLite database of another application, not a ctxrules store"


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
        return _upgrade(conn, version)
    if application_id != 0 or _user_tables(conn) > 0:
        return "the file is an SQLite database of another application, not a ctxrules store"
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    return _upgrade(conn, 0)
