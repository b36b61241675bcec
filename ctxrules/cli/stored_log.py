"""A store named where a recorded log is expected: told apart by its header, read by session.

`Context` keeps a live session in a store; ``replay`` and ``export`` read recorded logs. A
store given to them is not a log: with ``--session`` its session is read as one (the
same JSON Lines ``ctxrules export --session`` writes), without it the error names the
option and the store's sessions, not the bytes that failed to decode. A file named as a
store (``.sqlite``, ``.sqlite3``, ``.db``) is opened as one whatever it holds: an empty
``agent.sqlite`` is "not a ctxrules store", not an empty log.
"""

from __future__ import annotations

from pathlib import Path

import attrs
from returns.result import Failure, Success

from ctxrules.commit import ContextCommit
from ctxrules.engine.frame import RequestFrame
from ctxrules.importers import ImportResult, import_text
from ctxrules.store.errors import UnknownSession
from ctxrules.store.protocol import Store
from ctxrules.store.redact import shown_url
from ctxrules.store.url import parse_store_url

#: The first bytes of every SQLite database file.
SQLITE_HEADER = b"SQLite format 3\x00"
#: What the name of a file meant as a store ends with (an empty one has no header yet).
STORE_SUFFIXES = frozenset({".sqlite", ".sqlite3", ".db"})
#: Sessions named in the error when none is given; the rest are counted.
NAMED_SESSIONS = 10


def names_store(path: str) -> bool:
    """Whether ``path`` is a store's URL, or an existing SQLite file (by its header) or file named as one.

    >>> names_store("postgresql://me@db/ctx"), names_store("redis://cache/0")
    (True, False)
    """
    if "://" in path:
        # A URL the stores take (postgresql://, sqlite://); any other is no store, nor a file.
        return isinstance(parse_store_url(path), Success)
    try:
        with Path(path).open("rb") as file:
            header = file.read(len(SQLITE_HEADER))
    except OSError:
        return False
    return header == SQLITE_HEADER or Path(path).suffix.lower() in STORE_SUFFIXES


def open_read_only(path: str) -> Store | str:
    """The store at ``path`` opened without writing to it, or the one line saying why not.

    >>> open_read_only("sqlite:///no/such/store.sqlite")
    'sqlite:///no/such/store.sqlite: no such store'
    """
    from ctxrules.store import open_store  # noqa: PLC0415 - the store is the only I/O layer

    where = parse_store_url(path).value_or(None)
    if where is not None and where.backend == "sqlite" and not Path(where.target).is_file():
        return f"{shown_url(path)}: no such store"
    # Reading must not write: an empty file stays empty, a read-only folder or a store in
    # use by an agent is fine.
    opened = open_store(path, read_only=True)
    return str(opened.failure()) if isinstance(opened, Failure) else opened.unwrap()


def missing_session(store: str, session: str) -> str:
    """The error for a session the store does not hold, naming the command that lists them."""
    store = shown_url(store)
    return f"no session {session!r} in {store}: `ctxrules show {store}` lists the sessions"


def session_wanted(path: str) -> str:
    """The error for a store given without ``--session``: what to pass, and which sessions it holds."""
    store = open_read_only(path)
    if isinstance(store, str):
        return store
    try:
        listed = store.list_sessions()
    finally:
        store.close()
    if isinstance(listed, Failure):
        return f"{shown_url(path)}: {listed.failure()}"
    ids = [info.id for info in listed.unwrap()]
    if not ids:
        return (
            f"{shown_url(path)} is a ctxrules store with no sessions yet: there is nothing to read"
        )
    shown = ", ".join(repr(i) for i in ids[:NAMED_SESSIONS])
    more = f" and {len(ids) - NAMED_SESSIONS} more" if len(ids) > NAMED_SESSIONS else ""
    return (
        f"{shown_url(path)} is a ctxrules store, not a recorded log: name one of its sessions with "
        f"--session ({shown}{more})"
    )


@attrs.frozen
class StoredRun:
    """A stored session to replay: its history, the frame its requests had, and when pins were asked.

    ``pins`` maps a request's head to the (node, pinned) first seen in its stored commit;
    ``rules_version`` is the spec version of its last stored commit (None: none stored).
    """

    log: ImportResult
    frame: RequestFrame | None
    pins: dict[str, tuple[tuple[str, bool], ...]]
    rules_version: str | None = None


#: The key under which a chunk keeps the node ids of its pinned items.
_PINNED = "stored_log.pinned"


def _pinned(commit: ContextCommit) -> set[str]:
    """The node ids pinned in ``commit``, each chunk read once for all the commits sharing it."""
    found: set[str] = set()
    for chunk, _, _ in commit.items.runs(0, len(commit.items)):
        ids = chunk.memo.get(_PINNED)
        if ids is None:
            ids = chunk.memo[_PINNED] = tuple(i.source_node_id for i in chunk if i.pinned)
        found.update(ids)  # type: ignore[arg-type]
    return found


def pins_asked(commits: list[ContextCommit]) -> dict[str, tuple[tuple[str, bool], ...]]:
    """Each pin and unpin the stored commits show, at the head of the commit that first shows it.

    A session's stored commits share all but their last chunks, so this reads each chunk
    once, not every item of every commit.
    """
    asked: dict[str, tuple[tuple[str, bool], ...]] = {}
    before: set[str] = set()
    for commit in commits:
        now = _pinned(commit)
        changed = [(node, True) for node in sorted(now - before)]
        changed += [(node, False) for node in sorted(before - now)]
        if changed and commit.head_node_id is not None:
            asked[commit.head_node_id] = (*asked.get(commit.head_node_id, ()), *changed)
        before = now
    return asked


def read_stored(path: str, session: str) -> StoredRun | str:
    """The stored session as an imported log (its graph, as ``export --session`` writes it) with its frame and pins, or why not."""
    store = open_read_only(path)
    if isinstance(store, str):
        return store
    try:
        exported = store.export_jsonl(session)
        listed = store.list_sessions()
        commits = store.commits_for(session)
    finally:
        store.close()
    for read in (exported, listed, commits):
        if isinstance(read, Failure):
            problem = read.failure()
            unknown = isinstance(problem, UnknownSession)
            return missing_session(path, session) if unknown else str(problem)
    imported = import_text(exported.unwrap(), format="ctxrules-jsonl", source_name=path)
    if isinstance(imported, Failure):
        return str(imported.failure())
    result = imported.unwrap()
    # Its own id: a run stored back into the same store never moves the live session's head.
    replayed = attrs.evolve(result.session, session_id=replay_id(session))
    info = next(info for info in listed.unwrap() if info.id == session)
    stored = commits.unwrap()
    return StoredRun(
        attrs.evolve(result, session=replayed),
        RequestFrame.from_metadata(info.metadata),
        pins_asked(stored),
        stored[-1].rules_version if stored else None,
    )


def replay_id(session: str) -> str:
    """The id a replay of stored ``session`` runs (and is stored) under: never the session's own.

    >>> replay_id("main")
    'main.replay'
    """
    return f"{session}.replay"
