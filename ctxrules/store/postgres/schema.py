"""The PostgreSQL store's tables and triggers, created and upgraded by ordered migrations.

``schema_version`` holds one row per applied step. Opening a store applies the steps it
lacks, under an advisory lock so two workers starting at once migrate exactly once; a
database migrated by a newer ctxrules is refused, not guessed at. The triggers hold the
contract for any writer, raw SQL included: nodes are append-only except the one completion
of a running node, and commits never change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import psycopg

from ctxrules.store.objects import rewrite_inline

#: Any number unique to ctxrules: the advisory lock taken while the schema is migrated.
_MIGRATION_LOCK = 0x63747872
#: The edge each node has (a predecessor or a caller, never both), as its index holds it.
EDGE = "coalesce(predecessor, caller)"


#: A function run in a step's transaction after its statements; why it must stop, or None.
Rewrite = Callable[[psycopg.Connection[Any]], str | None]


@attrs.frozen
class Migration:
    """One step of the schema: its version, what it does, its statements, then any rewrite."""

    version: int
    description: str
    statements: tuple[str, ...]
    rewrite: Rewrite | None = None
    after: tuple[str, ...] = ()


_NODES_GUARD = """
CREATE FUNCTION ctxrules_nodes_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'nodes are append-only: a node is never deleted';
    END IF;
    -- The one allowed change: a running node gets its output and a final status, once.
    IF OLD.status = 'running' AND NEW.status IN ('done', 'error')
       AND (OLD.session_id, OLD.id, OLD.seq, OLD.role, OLD.fixed)
           IS NOT DISTINCT FROM (NEW.session_id, NEW.id, NEW.seq, NEW.role, NEW.fixed) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'nodes are append-only: only a running node is completed, once';
END
$$
"""

_COMMITS_GUARD = """
CREATE FUNCTION ctxrules_commits_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        RAISE EXCEPTION 'commits are immutable: a content-addressed commit never changes';
    END IF;
    RAISE EXCEPTION 'commits are immutable: a content-addressed commit is never deleted';
END
$$
"""

_BLOBS_GUARD = """
CREATE FUNCTION ctxrules_blobs_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: a handle names one content-addressed blob forever',
        TG_TABLE_NAME;
END
$$
"""

_NO_TRUNCATE = """
CREATE FUNCTION ctxrules_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: it is never truncated', TG_TABLE_NAME;
END
$$
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "sessions, append-only nodes with full-text search, immutable commits, heads, usage",
        (
            """
            CREATE TABLE sessions (
                id text PRIMARY KEY,
                created_at double precision NOT NULL,
                title text NOT NULL DEFAULT '',
                metadata text NOT NULL DEFAULT '{}'
            )
            """,
            # A node is split so the database can check a completion without parsing JSON:
            # ``fixed`` is the canonical JSON of every field but output, status and seq.
            """
            CREATE TABLE nodes (
                session_id text NOT NULL REFERENCES sessions (id),
                id text NOT NULL,
                seq integer NOT NULL CHECK (seq >= 0),
                role text NOT NULL,
                status text NOT NULL CHECK (status IN ('running', 'done', 'error')),
                fixed text NOT NULL,
                output text NOT NULL,
                body text NOT NULL,
                words text NOT NULL,
                tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', words)) STORED,
                PRIMARY KEY (session_id, id),
                UNIQUE (session_id, seq)
            )
            """,
            "CREATE INDEX nodes_tsv ON nodes USING gin (tsv)",
            """
            CREATE TABLE commits (
                id text PRIMARY KEY,
                session_id text NOT NULL REFERENCES sessions (id),
                seq integer NOT NULL CHECK (seq >= 0),
                head_node_id text,
                data text NOT NULL,
                UNIQUE (session_id, seq)
            )
            """,
            """
            CREATE TABLE heads (
                session_id text NOT NULL REFERENCES sessions (id),
                name text NOT NULL,
                node_id text NOT NULL,
                PRIMARY KEY (session_id, name),
                FOREIGN KEY (session_id, node_id) REFERENCES nodes (session_id, id)
            )
            """,
            """
            CREATE TABLE usage (
                session_id text PRIMARY KEY,
                data text NOT NULL
            )
            """,
            _NODES_GUARD,
            _COMMITS_GUARD,
            _NO_TRUNCATE,
            """
            CREATE TRIGGER nodes_append_only BEFORE UPDATE OR DELETE ON nodes
            FOR EACH ROW EXECUTE FUNCTION ctxrules_nodes_append_only()
            """,
            """
            CREATE TRIGGER commits_immutable BEFORE UPDATE OR DELETE ON commits
            FOR EACH ROW EXECUTE FUNCTION ctxrules_commits_immutable()
            """,
            """
            CREATE TRIGGER nodes_no_truncate BEFORE TRUNCATE ON nodes
            FOR EACH STATEMENT EXECUTE FUNCTION ctxrules_no_truncate()
            """,
            """
            CREATE TRIGGER commits_no_truncate BEFORE TRUNCATE ON commits
            FOR EACH STATEMENT EXECUTE FUNCTION ctxrules_no_truncate()
            """,
        ),
    ),
    Migration(
        2,
        "offloaded originals: content-addressed blobs, and the handle of a session naming each",
        (
            # bytea, not text: an original may hold a NUL, which PostgreSQL text refuses.
            """
            CREATE TABLE blobs (
                digest text PRIMARY KEY,
                chars integer NOT NULL CHECK (chars >= 0),
                data bytea NOT NULL
            )
            """,
            """
            CREATE TABLE offloads (
                session_id text NOT NULL REFERENCES sessions (id),
                handle text NOT NULL,
                digest text NOT NULL REFERENCES blobs (digest),
                PRIMARY KEY (session_id, handle)
            )
            """,
            _BLOBS_GUARD,
            """
            CREATE TRIGGER blobs_immutable BEFORE UPDATE OR DELETE ON blobs
            FOR EACH ROW EXECUTE FUNCTION ctxrules_blobs_immutable()
            """,
            """
            CREATE TRIGGER offloads_immutable BEFORE UPDATE OR DELETE ON offloads
            FOR EACH ROW EXECUTE FUNCTION ctxrules_blobs_immutable()
            """,
        ),
    ),
)

_OBJECTS_GUARD = """
CREATE FUNCTION ctxrules_objects_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% are content-addressed: a stored object never changes', TG_TABLE_NAME;
END
$$
"""


def _fill_handles(conn: psycopg.Connection[Any]) -> str | None:
    from ctxrules.rules.handles import handle_for  # noqa: PLC0415 - only this step hashes

    rows = conn.execute("SELECT session_id, id FROM nodes WHERE handle IS NULL").fetchall()
    with conn.cursor() as cursor:
        cursor.executemany(
            "UPDATE nodes SET handle = %s WHERE session_id = %s AND id = %s",
            [(handle_for(node_id), session_id, node_id) for session_id, node_id in rows],
        )
    return None


def _rewrite_commits(conn: psycopg.Connection[Any]) -> str | None:
    from ctxrules.store.postgres.rows import PgRows  # noqa: PLC0415 - rows imports connection

    return rewrite_inline(PgRows(conn))


MIGRATIONS = (
    *MIGRATIONS,
    Migration(
        3,
        "commits as shared objects: items once, chunks and tree nodes by digest (issue 27)",
        (
            "CREATE TABLE items (digest text PRIMARY KEY, data text NOT NULL)",
            "CREATE TABLE trees (digest text PRIMARY KEY, data text NOT NULL)",
            _OBJECTS_GUARD,
            """
            CREATE TRIGGER items_immutable BEFORE UPDATE OR DELETE ON items
            FOR EACH ROW EXECUTE FUNCTION ctxrules_objects_immutable()
            """,
            """
            CREATE TRIGGER trees_immutable BEFORE UPDATE OR DELETE ON trees
            FOR EACH ROW EXECUTE FUNCTION ctxrules_objects_immutable()
            """,
            """
            CREATE TRIGGER items_no_truncate BEFORE TRUNCATE ON items
            FOR EACH STATEMENT EXECUTE FUNCTION ctxrules_no_truncate()
            """,
            """
            CREATE TRIGGER trees_no_truncate BEFORE TRUNCATE ON trees
            FOR EACH STATEMENT EXECUTE FUNCTION ctxrules_no_truncate()
            """,
            # The rewrite of old commit rows is the one update a commit ever gets.
            "ALTER TABLE commits DISABLE TRIGGER commits_immutable",
        ),
        _rewrite_commits,
        ("ALTER TABLE commits ENABLE TRIGGER commits_immutable",),
    ),
    Migration(
        4,
        "no copy of each node's text beside its words (issue 27): snippets are cut from the node",
        ("ALTER TABLE nodes DROP COLUMN body",),
    ),
    Migration(
        5,
        "what a resumed session reads instead of its history: edges, running nodes and roots"
        " by index, and the reference tracker's state kept per turn (issue 27)",
        (
            "CREATE INDEX nodes_predecessor ON nodes (session_id, ((fixed::jsonb) ->> 'predecessor'))",
            "CREATE INDEX nodes_caller ON nodes (session_id, ((fixed::jsonb) ->> 'caller'))",
            "CREATE INDEX nodes_running ON nodes (session_id, seq) WHERE status = 'running'",
            """
            CREATE INDEX nodes_roots ON nodes (session_id, seq)
            WHERE ((fixed::jsonb) ->> 'predecessor') IS NULL
            AND ((fixed::jsonb) ->> 'caller') IS NULL
            """,
            """
            CREATE TABLE refs (
                session_id text NOT NULL REFERENCES sessions (id),
                word text NOT NULL,
                sources text NOT NULL,
                PRIMARY KEY (session_id, word)
            )
            """,
            """
            CREATE TABLE cited (
                session_id text NOT NULL REFERENCES sessions (id),
                node_id text NOT NULL,
                PRIMARY KEY (session_id, node_id)
            )
            """,
            """
            CREATE TABLE ref_heads (
                session_id text PRIMARY KEY REFERENCES sessions (id),
                head text NOT NULL
            )
            """,
        ),
    ),
    Migration(
        6,
        "a node's predecessor and caller as columns: its fields were read as jsonb by the"
        " edge indexes, which refuse a NUL escape, so a call whose arguments held a NUL"
        " could not be stored",
        (
            "ALTER TABLE nodes ADD COLUMN predecessor text, ADD COLUMN caller text",
            # Filling the new columns is the one change a stored node ever gets.
            "ALTER TABLE nodes DISABLE TRIGGER nodes_append_only",
            """
            UPDATE nodes SET predecessor = (fixed::jsonb) ->> 'predecessor',
                             caller = (fixed::jsonb) ->> 'caller'
            """,
            "ALTER TABLE nodes ENABLE TRIGGER nodes_append_only",
            "DROP INDEX nodes_predecessor",
            "DROP INDEX nodes_caller",
            "DROP INDEX nodes_roots",
            "CREATE INDEX nodes_predecessor ON nodes (session_id, predecessor)",
            "CREATE INDEX nodes_caller ON nodes (session_id, caller)",
            """
            CREATE INDEX nodes_roots ON nodes (session_id, seq)
            WHERE predecessor IS NULL AND caller IS NULL
            """,
            _NODES_GUARD.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION")
            .replace("OLD.role, OLD.fixed)", "OLD.role, OLD.fixed, OLD.predecessor, OLD.caller)")
            .replace("NEW.role, NEW.fixed)", "NEW.role, NEW.fixed, NEW.predecessor, NEW.caller)"),
        ),
    ),
    Migration(
        7,
        "each node's recall handle, by index: a resumed session's first recall reads the rows"
        " that hold it instead of hashing every stored id",
        (
            "ALTER TABLE nodes ADD COLUMN handle text",
            # Filling the new column is, again, the one change a stored node gets.
            "ALTER TABLE nodes DISABLE TRIGGER nodes_append_only",
        ),
        _fill_handles,
        (
            "ALTER TABLE nodes ENABLE TRIGGER nodes_append_only",
            "CREATE INDEX nodes_handle ON nodes (session_id, handle)",
            _NODES_GUARD.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION")
            .replace(
                "OLD.role, OLD.fixed)",
                "OLD.role, OLD.fixed, OLD.predecessor, OLD.caller, OLD.handle)",
            )
            .replace(
                "NEW.role, NEW.fixed)",
                "NEW.role, NEW.fixed, NEW.predecessor, NEW.caller, NEW.handle)",
            ),
        ),
    ),
    Migration(
        8,
        "commit rows may extend their parent (its id and the added items' digests) instead of"
        " naming a tree: no table changes, but an older ctxrules cannot read such a row",
        (),
    ),
    Migration(
        9,
        "item, tree and commit rows packed (`ctxrules.store.packing`): bytes, so ``data`` is bytea;"
        " the rows stored before stay their JSON, now as its UTF-8 bytes",
        (
            "ALTER TABLE items ALTER COLUMN data TYPE bytea USING convert_to(data, 'UTF8')",
            "ALTER TABLE trees ALTER COLUMN data TYPE bytea USING convert_to(data, 'UTF8')",
            "ALTER TABLE commits ALTER COLUMN data TYPE bytea USING convert_to(data, 'UTF8')",
        ),
    ),
    Migration(
        10,
        "no copy of each node's words beside its tsvector (issue 27): the tsvector is written"
        " from them in the same statement; rows stored before keep their bytes until rewritten",
        (
            "ALTER TABLE nodes ALTER COLUMN tsv DROP EXPRESSION",
            "ALTER TABLE nodes DROP COLUMN words",
        ),
    ),
    Migration(
        11,
        "items and tree nodes keyed by their digests' 32 bytes, not 64 hex digits (issue 27):"
        " half the key in each row and in the key's index",
        (
            "ALTER TABLE items ALTER COLUMN digest TYPE bytea USING decode(digest, 'hex')",
            "ALTER TABLE trees ALTER COLUMN digest TYPE bytea USING decode(digest, 'hex')",
        ),
    ),
    Migration(
        12,
        "one index over the edge each node has, predecessor or caller (never both), as"
        " SQLite's step 8 made: a node's write changes a page of one random-keyed index, not"
        " two (issue 27: the PostgreSQL log a turn writes at 100k messages)",
        (
            "DROP INDEX nodes_predecessor",
            "DROP INDEX nodes_caller",
            f"CREATE INDEX nodes_edge ON nodes (session_id, ({EDGE}))",
        ),
    ),
)

#: The version a fully migrated database reports.
SCHEMA_VERSION = MIGRATIONS[-1].version


def _exists(conn: psycopg.Connection[Any], table: str) -> bool:
    """Whether ``table`` is on the connection's ``search_path``."""
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()
    return row is not None and bool(row[0])


def missing_store(conn: psycopg.Connection[Any]) -> str | None:
    """Why a schema opened only to read holds no store, or None: it is never created then.

    Looking must not create a store's tables in whatever database a mistyped URL names.
    """
    if _exists(conn, "schema_version"):
        return None
    if _exists(conn, "sessions"):
        return "the schema holds tables of another application, not a ctxrules store"
    return "the schema holds no ctxrules store (nothing was created: it was opened to read)"


def _at_version(conn: psycopg.Connection[Any], version: int) -> bool:
    """Whether the schema is at ``version`` already, read without a lock or a write."""
    exists = conn.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
    if exists is None or not exists[0]:
        return False
    row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
    return row is not None and int(row[0]) == version


def migrate(conn: psycopg.Connection[Any], steps: tuple[Migration, ...] = MIGRATIONS) -> str | None:
    """Apply the steps the database lacks, in order; the reason it is refused, or None.

    Runs inside the caller's transaction, so a failed step leaves the schema as it was. A
    schema already at this version is only read: a role that may only SELECT opens it.
    """
    latest = steps[-1].version if steps else 0
    if _at_version(conn, latest):
        return None
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version ("
        " version integer PRIMARY KEY, description text NOT NULL,"
        " applied_at timestamptz NOT NULL DEFAULT now())"
    )
    row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
    current = int(row[0]) if row is not None else 0
    if current > latest:
        return f"schema version {current} is newer than this ctxrules ({latest}); upgrade ctxrules"
    if current == 0:
        found = conn.execute("SELECT to_regclass('sessions') IS NOT NULL").fetchone()
        if found is not None and found[0]:
            return "the schema holds tables of another application, not a ctxrules store"
    for step in steps:
        if step.version <= current:
            continue
        for statement in step.statements:
            conn.execute(statement)
        refused = step.rewrite(conn) if step.rewrite is not None else None
        if refused is not None:
            return f"migrating to schema version {step.version}: {refused}"
        for statement in step.after:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_version (version, description) VALUES (%s, %s)",
            (step.version, step.description),
        )
    return None
