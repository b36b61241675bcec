"""Copying sessions between stores, both ways, verified; and the CLI on a real session."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pg_server
import pytest
from returns.result import Success

from ctxrules.cli.main import build_parser
from ctxrules.commit import ContextCommit
from ctxrules.dag import Session
from ctxrules.store import HeadMoved, Store, UnknownSession, open_store
from ctxrules.store.copy import Copied, copy_sessions
from ctxrules.tokens.usage import ProviderUsage, UsageState

REAL_SESSION = "claude-code/5d_755497c182_0.jsonl"


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    args = build_parser().parse_args(list(argv))
    return args.run(args, out), out.getvalue()


@pytest.fixture
def other(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> Iterator[Store]:
    """A store of the other backend: SQLite beside PostgreSQL, PostgreSQL beside SQLite."""
    if backend == "postgresql":
        url = str(tmp_path / "other.db")
    else:
        url = pg_server.fresh_schema_url(request.getfixturevalue("postgres_server"))
    opened = open_store(url).unwrap()
    yield opened
    opened.close()


def test_a_session_copies_across_backends_and_back(
    store: Store, other: Store, session: Session
) -> None:
    """Nodes, heads, commits (in stored order), usage, blobs and the session row arrive intact."""
    store.create_session("s1", created_at=5.0, title="t", metadata={"team": ["a"]}).unwrap()
    second = ContextCommit("s1", summary="second")
    first = ContextCommit("s1", parent_ids=(second.id,), summary="child stored first")
    usage = UsageState().record(ProviderUsage(900, 12), estimated_request=880)
    store.save_session(session, usage=usage).unwrap()
    for commit in (first, second):
        store.put_commit(commit).unwrap()
    store.move_head("s1", "draft", None, session.graph.order[0]).unwrap()
    blobs = {"h:aaaaaaaa": "row\x00 naïve ✓\n" * 600, "h:bbbbbbbb": ""}
    for handle, text in blobs.items():
        store.put_blob("s1", handle, text).unwrap()  # type: ignore[attr-defined]

    copied = copy_sessions(store, other)
    assert copied == Success([Copied("s1", len(session.graph), 2, len(session.graph), 2)])
    assert other.export_jsonl("s1") == store.export_jsonl("s1")
    assert other.commits_for("s1") == Success([first, second])
    assert other.load_session("s1") == Success(session)
    assert other.get_head("s1", "draft") == Success(session.graph.order[0])
    assert other.session_blobs("s1") == Success(blobs)
    assert other.load_usage("s1") == store.load_usage("s1") is not None
    assert other.list_sessions() == store.list_sessions()
    # Again: nothing new, still verified; and back the other way changes nothing.
    assert copy_sessions(store, other).unwrap()[0].added == 0
    assert copy_sessions(other, store).unwrap()[0].added == 0


def test_a_head_the_target_points_elsewhere_is_not_overwritten(
    store: Store, other: Store, session: Session
) -> None:
    """A named head the target already moves elsewhere fails the copy, as ``main`` does."""
    for where in (store, other):
        where.save_session(session).unwrap()
    store.move_head("s1", "draft", None, session.graph.order[0]).unwrap()
    other.move_head("s1", "draft", None, session.graph.order[1]).unwrap()
    refused = copy_sessions(store, other).failure()
    assert isinstance(refused, HeadMoved)
    assert other.get_head("s1", "draft") == Success(session.graph.order[1])


def test_a_blob_the_target_names_otherwise_fails_the_copy(
    store: Store, other: Store, session: Session
) -> None:
    """A handle the target holds with another text is refused, never overwritten."""
    for where, text in ((store, "source text"), (other, "target text")):
        where.save_session(session).unwrap()
        where.put_blob("s1", "h:aaaaaaaa", text).unwrap()  # type: ignore[attr-defined]
    refused = copy_sessions(store, other).failure()
    assert refused.name == "handle"  # type: ignore[attr-defined]
    assert other.session_blobs("s1") == Success({"h:aaaaaaaa": "target text"})


def test_an_unknown_session_is_a_failure(store: Store, other: Store) -> None:
    """Asking to copy a session the source lacks fails naming it, and copies nothing."""
    assert copy_sessions(store, other, ["nope"]).failure() == UnknownSession("nope")
    assert other.list_sessions() == Success([])


def test_replay_into_postgresql_and_migrate_round_trip_byte_identically(
    shared_sessions: Path, postgres_server: pg_server.Server, tmp_path: Path
) -> None:
    """A real session replayed into PostgreSQL, migrated to SQLite and back, exports the same."""
    log = shared_sessions / REAL_SESSION
    if not log.is_file():
        pytest.skip(f"{log} not found")
    first = pg_server.fresh_schema_url(postgres_server)
    second = pg_server.fresh_schema_url(postgres_server)
    middle = str(tmp_path / "middle.db")
    status, _ = _cli("replay", str(log), "--store", first)
    assert status == 0
    with open_store(first).unwrap() as stored:
        session_id = stored.list_sessions().unwrap()[0].id
    assert _cli("migrate", first, middle)[0] == 0
    status, printed = _cli("migrate", middle, second)
    assert status == 0
    assert printed.endswith("verified\nmigrated 1 session\n")
    exports = [_cli("export", "--session", session_id, url) for url in (first, middle, second)]
    direct = _cli("export", str(log))
    assert exports == [direct] * 3
    assert len(direct[1].splitlines()) > 10
    assert _cli("verify", second)[1].startswith("ok: ")
    assert _cli("migrate", "redis://x", middle)[0] == 2
