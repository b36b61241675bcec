"""A store of schema version 2 (each commit whole in ``commits.data``) upgrades in place on open.

The old store is made here: real sessions driven through `Context` into a current store,
whose rows are copied under the old DDL (schema steps 1 and 2, which never change) with
every commit written back in its first form, by hand. Opening it with this ctxrules
rewrites the commits as shared objects; every id must verify, ``ctxrules verify`` pass,
and each session's next request be the one it was before, also after ``ctxrules migrate``
to the other backend and back.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pg_server
import pytest
from raw_sql import raw_rows

from ctxrules.canonical import canonical_json
from ctxrules.cli.main import main
from ctxrules.commit import ContextCommit, commit_to_json
from ctxrules.engine.context import Context
from ctxrules.recall import offload
from ctxrules.store import OpenFailed, Store, open_store
from ctxrules.store import schema as sqlite_schema
from ctxrules.store.packing import DIGESTS, HEADER, VERSION, unpack
from ctxrules.store.rows import SqliteRows
from ctxrules.store.schema import SCHEMA_VERSION as SQLITE_VERSION
from ctxrules.store.sqlite_nodes import read_record

SESSIONS = ("alpha", "beta", "gamma")
TURNS = 6
#: The tables whose rows schema step 3 leaves as they are, in foreign-key order.
KEPT = ("sessions", "nodes", "heads", "usage", "blobs", "offloads")
#: The time every "next request" is built at, so before and after read the same clock.
NEXT = 100_000.0


def _reply(turn: int, path: str) -> dict[str, object]:
    call = {"name": "read_file", "arguments": json.dumps({"path": path})}
    message = {
        "role": "assistant",
        "content": f"Step {turn}: reading {path}.",
        "tool_calls": [{"id": f"call_{turn}", "type": "function", "function": call}],
    }
    return {
        "id": f"r{turn}",
        "object": "chat.completion",
        "created": turn,
        "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
        "usage": {"prompt_tokens": 900 + turn, "completion_tokens": 20, "total_tokens": 920},
    }


def _context(url: str, session: str, clock: list[float]) -> Context:
    # The default tokenizer: `ctxrules verify` counts with it (invariant 10, one ruler).
    return Context(
        "default",
        model="gpt-4o",
        window=16_000,
        system="Be careful.",
        tools=[{"name": "read_file", "input_schema": {"type": "object"}}],
        store=url,
        session=session,
        clock=lambda: clock[0],
    )


def _drive(url: str, session: str) -> None:
    # Each tool result is longer than the cap; each is then offloaded whole as a blob, as
    # `Context` did before it answered handles from the stored nodes.
    clock = [1_000.0]
    with _context(url, session, clock) as ctx:
        ctx.add({"role": "user", "content": f"Summarise the {session} package."})
        for turn in range(TURNS):
            clock[0] += 600.0
            ctx.openai()
            path = f"src/{session}/mod{turn}.py"
            ctx.record(_reply(turn, path))
            body = f"line {turn} of {session}: x = {turn}\n" * 300
            ctx.add({"role": "tool", "tool_call_id": f"call_{turn}", "content": body})
    with open_store(url).unwrap() as store:
        last = store.last_commit(session).unwrap()
        assert last is not None
        offload(store, session, last, store.load_graph(session).unwrap()).unwrap()


def _next_request(url: str, session: str) -> dict[str, object]:
    with _context(url, session, [NEXT]) as ctx:
        return ctx.openai()


def _form(data: object) -> str:
    """How a stored object row is kept: "packed" (`ctxrules.store.packing`) or "json"."""
    raw = data.encode() if isinstance(data, str) else bytes(data)  # type: ignore[arg-type]
    return (
        "packed" if raw[:1] in {bytes((VERSION,)), bytes((DIGESTS,)), bytes((HEADER,))} else "json"
    )


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    return status, capsys.readouterr().out


# -- the old store, by hand, on each backend -----------------------------------------------


def _old_rows(commits: dict[str, list[ContextCommit]]) -> list[tuple[object, ...]]:
    # The first form, as schema version 2 wrote it: the whole commit as canonical JSON.
    return [
        (c.id, sid, seq, c.head_node_id, canonical_json(commit_to_json(c)))
        for sid, listed in commits.items()
        for seq, c in enumerate(listed)
    ]


def _old_sqlite(source: str, target: str, rows: list[tuple[object, ...]]) -> None:
    conn = sqlite3.connect(target, isolation_level=None)
    try:
        conn.execute(f"ATTACH DATABASE '{source}' AS src")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(f"PRAGMA application_id = {sqlite_schema.APPLICATION_ID}")
        for statement in (*sqlite_schema.MIGRATIONS[0], *sqlite_schema.MIGRATIONS[1]):
            assert isinstance(statement, str)
            conn.execute(statement)
        for table in KEPT:
            if table == "nodes":
                _old_sqlite_nodes(conn)
                continue
            columns = ", ".join(r[1] for r in conn.execute(f"PRAGMA main.table_info({table})"))
            conn.execute(f"INSERT INTO main.{table} ({columns}) SELECT {columns} FROM src.{table}")  # noqa: S608 - constant tables
        conn.executemany(
            "INSERT INTO commits (id, session_id, seq, head_node_id, data) VALUES (?, ?, ?, ?, ?)",
            rows,
        )
        conn.execute("PRAGMA user_version = 2")
        conn.execute("COMMIT")
        conn.execute("DETACH DATABASE src")
    finally:
        conn.close()


def _old_sqlite_nodes(conn: sqlite3.Connection) -> None:
    # Version 2 kept every output in its row: the source's pieces (packed) joined back in.
    found = conn.execute("SELECT session_id, id, seq, role, data, chunks FROM src.nodes")
    for session_id, node_id, seq, role, data, chunks in found.fetchall():
        record = read_record(SqliteRows(conn), session_id, node_id, data, chunks)
        conn.execute(
            "INSERT INTO main.nodes (session_id, id, seq, role, data) VALUES (?, ?, ?, ?, ?)",
            (session_id, node_id, seq, role, canonical_json(record)),
        )


def _schema_of(url: str) -> str:
    found = re.search(r"search_path%3D(\w+)", url)
    assert found is not None
    return found.group(1)


def _old_postgres(source: str, target: str, rows: list[tuple[object, ...]]) -> None:
    import psycopg  # noqa: PLC0415 - only where PostgreSQL runs

    from ctxrules.store.postgres.schema import MIGRATIONS, migrate  # noqa: PLC0415 - see above

    src, dst = _schema_of(source), _schema_of(target)
    with psycopg.connect(target) as conn, conn.transaction():
        assert migrate(conn, MIGRATIONS[:2]) is None
        listing = (
            "SELECT column_name FROM information_schema.columns WHERE table_schema = %s"
            " AND table_name = %s AND is_generated = 'NEVER' ORDER BY ordinal_position"
        )
        for table in KEPT:
            wanted = [name for (name,) in conn.execute(listing, (dst, table)).fetchall()]
            there = {name for (name,) in conn.execute(listing, (src, table)).fetchall()}
            # A column later steps dropped (nodes.body, a copy of the text) is read as empty.
            picked = ", ".join(name if name in there else "''" for name in wanted)
            columns = ", ".join(wanted)
            conn.execute(f"INSERT INTO {table} ({columns}) SELECT {picked} FROM {src}.{table}")  # noqa: S608 - constant tables
        with conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO commits (id, session_id, seq, head_node_id, data)"
                " VALUES (%s, %s, %s, %s, %s)",
                rows,
            )


def _version(url: str) -> int:
    sql = (
        "SELECT max(version) FROM schema_version"
        if url.startswith("postgresql://")
        else "PRAGMA user_version"
    )
    return int(raw_rows(url, sql)[0][0])


def _current_version(url: str) -> int:
    """The version a fully upgraded store of this backend is at (SQLite has a step more)."""
    if url.startswith("postgresql://"):
        from ctxrules.store.postgres.schema import SCHEMA_VERSION as PG_VERSION  # noqa: PLC0415

        return PG_VERSION
    return SQLITE_VERSION


def _has_objects(url: str) -> bool:
    sql = (
        "SELECT to_regclass('items') IS NOT NULL"
        if url.startswith("postgresql://")
        else "SELECT count(*) FROM sqlite_master WHERE name = 'items'"
    )
    return bool(raw_rows(url, sql)[0][0])


class Made:
    """The engine's sessions in a current store, and a maker of old copies of it."""

    def __init__(self, backend: str, fresh: Callable[[], str]) -> None:
        self.backend, self.fresh = backend, fresh
        self.source = fresh()
        for session in SESSIONS:
            _drive(self.source, session)
        with open_store(self.source).unwrap() as store:
            self.commits = {s: store.commits_for(s).unwrap() for s in SESSIONS}
            self.blobs = {s: store.session_blobs(s).unwrap() for s in SESSIONS}
            self.heads = {s: store.heads(s).unwrap() for s in SESSIONS}

    def old(self, rows: list[tuple[object, ...]] | None = None) -> str:
        """A new store of schema version 2 holding the sessions (or the given commit rows)."""
        url = self.fresh()
        make = _old_postgres if self.backend == "postgresql" else _old_sqlite
        make(self.source, url, _old_rows(self.commits) if rows is None else rows)
        return url


@pytest.fixture
def made(backend: str, fresh_store_url: Callable[[], str]) -> Made:
    """Three sessions of six turns each, with their blobs, made by the engine."""
    return Made(backend, fresh_store_url)


@pytest.fixture
def other_url(backend: str, tmp_path: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh store of the other backend."""
    if backend == "postgresql":
        yield str(tmp_path / "other.db")
    else:
        yield pg_server.fresh_schema_url(request.getfixturevalue("postgres_server"))


def _check_commits(store: Store, made: Made) -> None:
    for session, expected in made.commits.items():
        read = store.commits_for(session, check=True).unwrap()
        assert [c.id for c in read] == [c.id for c in expected]
        assert read == expected
        for commit in expected:
            assert store.get_commit(commit.id, check=True).unwrap() == commit
        assert store.session_blobs(session).unwrap() == made.blobs[session]
        assert store.heads(session).unwrap() == made.heads[session]


# -- the tests -------------------------------------------------------------------------------


def test_the_old_store_is_what_version_2_wrote(made: Made) -> None:
    """The hand-made store is at version 2, without object tables, every commit whole in its row."""
    old = made.old()
    assert _version(old) == 2
    assert not _has_objects(old)
    forms = [json.loads(unpack(data)) for (data,) in raw_rows(old, "SELECT data FROM commits")]
    assert len(forms) == sum(map(len, made.commits.values())) >= len(SESSIONS) * TURNS
    assert all("items" in form and "format" not in form for form in forms)
    assert all(made.blobs.values())


def test_an_old_store_upgrades_and_every_session_goes_on_unchanged(
    made: Made, capsys: pytest.CaptureFixture[str]
) -> None:
    """Opening upgrades every commit; ids verify, `ctxrules verify` passes, next requests match."""
    old = made.old()
    before = {session: _next_request(made.source, session) for session in SESSIONS}
    with open_store(old).unwrap() as store:
        _check_commits(store, made)
    assert _version(old) == _current_version(old)
    forms = [json.loads(unpack(data)) for (data,) in raw_rows(old, "SELECT data FROM commits")]
    assert {form.get("format") for form in forms} == {2}
    status, printed = _cli(capsys, "verify", old)
    assert (status, printed.splitlines()[-1][:4]) == (0, "ok: "), printed
    assert {session: _next_request(old, session) for session in SESSIONS} == before
    # Rows stored before packing stay JSON; what the sessions store after it is packed.
    for session in SESSIONS:
        with _context(old, session, [NEXT]) as ctx:
            ctx.add({"role": "user", "content": f"one more turn of {session}"})
            ctx.openai()
    assert {_form(data) for (data,) in raw_rows(old, "SELECT data FROM items")} == {
        "json",
        "packed",
    }
    assert {_form(data) for (data,) in raw_rows(old, "SELECT data FROM trees")} >= {"json"}
    assert _cli(capsys, "verify", old)[0] == 0
    with open_store(old).unwrap() as store:
        assert all(store.last_commit(session).unwrap() is not None for session in SESSIONS)


def test_an_upgraded_store_migrates_to_the_other_backend_and_back_whole(
    made: Made, other_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ctxrules migrate` carries nodes, heads, commits, usage and every blob both ways.

    An old SQLite source is read as it is, not upgraded: migrate never writes its source.
    """
    old, back = made.old(), made.fresh()
    before = {session: _next_request(made.source, session) for session in SESSIONS}
    blobs = sum(map(len, made.blobs.values()))
    old_bytes = Path(old).read_bytes() if made.backend == "sqlite" else None
    for source, target in ((old, other_url), (other_url, back)):
        status, printed = _cli(capsys, "migrate", source, target)
        assert status == 0, printed
        assert printed.endswith(f"migrated {len(SESSIONS)} sessions\n")
        assert f"{len(made.blobs['alpha'])} offloaded originals, verified" in printed
        with open_store(target).unwrap() as store:
            _check_commits(store, made)
        assert sum(n for (n,) in raw_rows(target, "SELECT count(*) FROM offloads")) == blobs
        assert _cli(capsys, "verify", target)[0] == 0
    if old_bytes is not None:
        assert Path(old).read_bytes() == old_bytes
    # Upgraded now (opening for writing upgrades), to compare the copies with its objects.
    open_store(old).unwrap().close()
    # Each object once: every copy holds as many items as the upgraded store. The upgrade
    # gave each commit a tree; a copy stores a commit that only adds to its parent as its
    # extension, so both copies hold the same tree nodes, no more than the upgraded store.
    items = "SELECT count(*) FROM items"
    assert raw_rows(back, items) == raw_rows(other_url, items) == raw_rows(old, items)
    trees = "SELECT count(*) FROM trees"
    assert raw_rows(back, trees) == raw_rows(other_url, trees) <= raw_rows(old, trees)
    assert {session: _next_request(back, session) for session in SESSIONS} == before


def test_an_upgrade_that_fails_midway_leaves_the_old_store_as_it_was(made: Made) -> None:
    """A damaged commit row in the middle stops the upgrade; the store stays at version 2, unchanged."""
    rows = _old_rows(made.commits)
    middle = len(rows) // 2
    damaged = (*rows[middle][:4], rows[middle - 1][4])  # another commit's content
    old = made.old([*rows[:middle], damaged, *rows[middle + 1 :]])
    snapshot = raw_rows(old, "SELECT id, data FROM commits ORDER BY id")
    for _ in range(2):
        opened = open_store(old)
        failure = opened.failure()
        assert isinstance(failure, OpenFailed)
        assert f"commit {damaged[0]}" in failure.reason
        # SQLite names the version it was going to, PostgreSQL the step that failed (3).
        step = _current_version(old) if made.backend == "sqlite" else 3
        assert f"migrating to schema version {step}" in failure.reason
        assert _version(old) == 2
        assert not _has_objects(old)
        assert raw_rows(old, "SELECT id, data FROM commits ORDER BY id") == snapshot
    if made.backend == "sqlite":
        # Still a readable store of the old version: its sessions and whole commits load.
        with open_store(old, read_only=True).unwrap() as store:
            assert [info.id for info in store.list_sessions().unwrap()] == list(SESSIONS)
            assert store.commits_for(SESSIONS[0]).unwrap() == made.commits[SESSIONS[0]]
