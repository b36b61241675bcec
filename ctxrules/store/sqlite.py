"""`SqliteStore`: the embedded default store, one SQLite file in WAL mode.

Each public method is one transaction and returns a `Result`; sqlite3 errors become
`SqliteFailed` at this boundary and never escape.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Self

from pyrsistent import pset
from returns.result import Failure, Result, Success

from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Graph, Session, Status, graph_to_jsonl
from ctxrules.store import blobs, commits, heads, nodes, objects, sessions, snapshot
from ctxrules.store import search as fts
from ctxrules.store.connection import Synchronous, T, Work, connect, run
from ctxrules.store.errors import DamagedRow, InvalidArgument, StoreError
from ctxrules.store.search import SearchHit
from ctxrules.store.sessions import SessionInfo, require_session
from ctxrules.store.turn import TurnWrite, TurnWritten
from ctxrules.tokens.usage import UsageState


def _in_session_fresh(
    session_id: str, work: Callable[[sqlite3.Connection, list[str]], Result[T, StoreError]]
) -> Callable[[sqlite3.Connection, list[str]], Result[T, StoreError]]:
    def checked(conn: sqlite3.Connection, fresh: list[str]) -> Result[T, StoreError]:
        missing = require_session(conn, session_id)
        return Failure(missing) if missing is not None else work(conn, fresh)

    return checked


def _in_session(session_id: str, work: Work[T]) -> Work[T]:
    def checked(conn: sqlite3.Connection) -> Result[T, StoreError]:
        missing = require_session(conn, session_id)
        return Failure(missing) if missing is not None else work(conn)

    return checked


class SqliteStore:
    """Sessions, nodes, commits, heads and usage in one SQLite file.

    >>> store = SqliteStore.open(":memory:").unwrap()
    >>> store.create_session("s1", title="demo").unwrap()
    >>> store.append_node("s1", Call("u1", "user", output="hello")).unwrap()
    0
    >>> [hit.node_id for hit in store.search("hello").unwrap()]
    ['u1']
    >>> store.close()
    """

    __slots__ = ("_conn", "_known", "path")

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        self._conn: sqlite3.Connection | None = conn
        self.path = path
        # Digests of commit objects known stored (written or read here): a hint that
        # spares a turn re-sending them; objects are never deleted, so it never goes stale.
        self._known: set[str] = set()

    def _run_fresh(
        self, operation: str, work: Callable[[sqlite3.Connection, list[str]], Result[T, StoreError]]
    ) -> Result[T, StoreError]:
        """Run ``work``, and learn the object digests it wrote once its transaction commits."""
        fresh: list[str] = []
        result = run(self._conn, operation, lambda conn: work(conn, fresh), write=True)
        if isinstance(result, Success):
            self._known.update(fresh)
        return result

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "FULL",
        busy_timeout: float = 30.0,
        read_only: bool = False,
    ) -> Result[SqliteStore, StoreError]:
        """Open (or create) the store at ``path``; a file that is no store opens to a `Failure`.

        ``read_only=True`` opens an existing store without writing to it or its folder (an
        empty file stays empty and is refused); every write then fails as a value.

        ``synchronous="FULL"`` makes every returned write survive power loss as well as a
        killed process; ``"NORMAL"`` only the latter, for faster bulk loads. A writer that
        finds the file locked waits up to ``busy_timeout`` seconds.

        >>> print(SqliteStore.open("x.db", synchronous="OFF").failure())  # type: ignore[arg-type]
        synchronous='OFF': expected 'FULL' or 'NORMAL'
        """
        if synchronous not in ("FULL", "NORMAL"):
            expected = "'FULL' or 'NORMAL'"
            return Failure(InvalidArgument("synchronous", repr(synchronous), expected))
        if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, int | float):
            return Failure(InvalidArgument("busy_timeout", repr(busy_timeout), "seconds >= 0"))
        if busy_timeout < 0:
            return Failure(InvalidArgument("busy_timeout", repr(busy_timeout), "seconds >= 0"))
        mode: Synchronous = "READ_ONLY" if read_only else synchronous
        return connect(path, busy_timeout=busy_timeout, synchronous=mode).map(
            lambda conn: cls(conn, os.fspath(path))
        )

    def close(self) -> None:
        """Close the connection; later calls fail with `StoreClosed`. Closing twice is fine."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "open" if self._conn is not None else "closed"
        return f"SqliteStore({self.path!r}, {state})"

    # -- sessions and nodes ------------------------------------------------------------------

    def create_session(
        self,
        session_id: str,
        *,
        created_at: float = 0.0,
        title: str = "",
        metadata: Mapping[str, object] | None = None,
    ) -> Result[None, StoreError]:
        """Add a session; the same session again is a no-op, a different one `SessionExists`."""
        return run(
            self._conn,
            "create_session",
            lambda conn: sessions.create_session(conn, session_id, created_at, title, metadata),
            write=True,
        )

    def list_sessions(self) -> Result[list[SessionInfo], StoreError]:
        """Every session, oldest first, with its node count."""
        return run(self._conn, "list_sessions", sessions.list_sessions, write=False)

    def append_node(self, session_id: str, call: Call) -> Result[int, StoreError]:
        """Append ``call`` in its own transaction and return the seq the store gave it.

        The seq is the session's next one, taken under the write lock, so concurrent
        appenders never collide. The same node appended again returns its seq; another
        node under a stored id is `NodeConflict`; an unknown edge is `DagRefused`.
        """
        work = _in_session(session_id, lambda conn: nodes.append_node(conn, session_id, call))
        return run(self._conn, "append_node", work, write=True)

    def append_graph(self, session_id: str, graph: Graph) -> Result[int, StoreError]:
        """Store every node of ``graph`` not yet stored, in one transaction; the count added."""
        work = _in_session(session_id, lambda conn: nodes.append_graph(conn, session_id, graph))
        return run(self._conn, "append_graph", work, write=True)

    def append_at_head(
        self, session_id: str, call: Call, head_name: str = "main"
    ) -> Result[int, StoreError]:
        """Append ``call`` and move the head from its predecessor to it, in one transaction.

        If the head is no longer ``call.predecessor`` (another worker appended first) nothing
        is stored and the result is `HeadMoved` naming the new head: rebase and retry.
        """
        work = _in_session(
            session_id, lambda conn: snapshot.append_at_head(conn, session_id, call, head_name)
        )
        return run(self._conn, "append_at_head", work, write=True)

    def complete_node(
        self, session_id: str, node_id: str, output: object, status: Status | str = Status.DONE
    ) -> Result[None, StoreError]:
        """Fill a running node's output and final status, exactly once."""
        work = _in_session(
            session_id,
            lambda conn: nodes.complete_node(conn, session_id, node_id, output, status),
        )
        return run(self._conn, "complete_node", work, write=True)

    def load_graph(self, session_id: str) -> Result[Graph, StoreError]:
        """The session's graph, rebuilt by `Graph.append` in seq order."""
        work = _in_session(session_id, lambda conn: nodes.load_graph(conn, session_id))
        return run(self._conn, "load_graph", work, write=False)

    def load_session(self, session_id: str, head_name: str = "main") -> Result[Session, StoreError]:
        """The session: its graph, the head named ``head_name`` (or None) and running nodes."""

        def work(conn: sqlite3.Connection) -> Result[Session, StoreError]:
            graph = nodes.load_graph(conn, session_id)
            head = heads.get_head(conn, session_id, head_name)
            if isinstance(graph, Failure):
                return Failure(graph.failure())
            if isinstance(head, Failure):
                return Failure(head.failure())
            loaded = graph.unwrap()
            running = pset(i for i, n in loaded.nodes.items() if n.status is Status.RUNNING)
            return Success(Session(session_id, loaded, head.unwrap(), running))

        return run(self._conn, "load_session", _in_session(session_id, work), write=False)

    def save_session(
        self,
        session: Session,
        *,
        commits: Iterable[ContextCommit] = (),
        usage: UsageState | None = None,
        head_name: str = "main",
        expected_head: str | None = None,
        created_at: float = 0.0,
        title: str = "",
    ) -> Result[int, StoreError]:
        """Store a session with its head, commits and usage in one transaction; nodes added.

        The session row is created if missing; nodes already stored are skipped; commits
        are stored parents first. The head moves by compare-and-set from ``expected_head``
        (None: no head yet) unless it already points at ``session.head``, so saving the
        same session twice is a no-op and a save over someone else's head is `HeadMoved`.
        """
        batch = tuple(commits)
        return self._run_fresh(
            "save_session",
            lambda c, fresh: snapshot.save_session(
                c,
                session,
                batch=batch,
                usage=usage,
                head_name=head_name,
                expected_head=expected_head,
                created_at=created_at,
                title=title,
                known=self._known,
                fresh=fresh,
            ),
        )

    def write_turn(self, turn: TurnWrite) -> Result[TurnWritten, StoreError]:
        """Store one turn (nodes, completions, head, commits, usage) in one transaction.

        All or nothing: a `HeadMoved` or any refusal stores none of it.
        """
        work = lambda c, fresh: snapshot.write_turn(c, turn, self._known, fresh)  # noqa: E731
        return self._run_fresh("write_turn", _in_session_fresh(turn.session_id, work))

    def export_jsonl(self, session_id: str) -> Result[str, StoreError]:
        """The session's graph in the library's JSON Lines interchange (one node a line)."""
        return self.load_graph(session_id).map(graph_to_jsonl)

    # -- commits and heads -------------------------------------------------------------------

    def put_commit(self, commit: ContextCommit) -> Result[None, StoreError]:
        """Store a commit under its content id; storing it again is a no-op."""

        def work(conn: sqlite3.Connection, fresh: list[str]) -> Result[None, StoreError]:
            put = commits.put_commit(conn, commit, self._known)
            return put.map(lambda written: fresh.extend(written.digests))

        return self._run_fresh("put_commit", work)

    def get_commit(
        self, commit_id: str, *, check: bool = False
    ) -> Result[ContextCommit, StoreError]:
        """The commit with this id (its id recomputed from its content), or `UnknownCommit`.

        ``check`` also recomputes every item's digest from its content (for ``verify``).
        """
        work = lambda c: commits.get_commit(c, commit_id, check=check)  # noqa: E731
        return run(self._conn, "get_commit", work, write=False)

    def commits_for(
        self, session_id: str, *, check: bool = False
    ) -> Result[list[ContextCommit], StoreError]:
        """The session's commits in the order they were stored, sharing their chunks."""
        work = lambda c: commits.commits_for(c, session_id, check=check)  # noqa: E731
        return run(self._conn, "commits_for", work, write=False)

    def last_commit(self, session_id: str) -> Result[ContextCommit | None, StoreError]:
        """The session's most recently stored commit (what a resumed engine starts from)."""
        read = run(
            self._conn, "last_commit", lambda c: commits.last_commit(c, session_id), write=False
        )
        commit = read.value_or(None)
        if commit is not None:
            self._known.update(objects.object_digests(commit.items))
        return read

    def get_head(self, session_id: str, name: str = "main") -> Result[str | None, StoreError]:
        """The node id a head points at, or None if the session has no such head."""
        return run(
            self._conn, "get_head", lambda c: heads.get_head(c, session_id, name), write=False
        )

    def move_head(
        self, session_id: str, name: str, expected_old: str | None, new: str
    ) -> Result[None, StoreError]:
        """Compare-and-set: point ``name`` at ``new`` if it points at ``expected_old``.

        ``expected_old=None`` expects no head yet. A mismatch is `HeadMoved` naming the
        actual head; the mover reloads and decides again.
        """
        return run(
            self._conn,
            "move_head",
            lambda c: heads.move_head(c, session_id, name, expected_old, new),
            write=True,
        )

    # -- search and usage --------------------------------------------------------------------

    def search(
        self, query: str, session_id: str | None = None, limit: int = 20
    ) -> Result[list[SearchHit], StoreError]:
        """Nodes matching an FTS5 query, best first, in one session or all; bad syntax fails.

        Use `literal` to search for text as typed.
        """
        return run(
            self._conn, "search", lambda c: fts.search(c, query, session_id, limit), write=False
        )

    # -- offloaded originals (the `BlobStore` protocol of ctxrules.recall) --------------------

    def put_blob(self, session_id: str, handle: str, text: str) -> Result[str, StoreError]:
        """Keep ``text`` whole under ``handle``, content-addressed; returns its digest."""
        work = lambda conn: blobs.put_blob(conn, session_id, handle, text)  # noqa: E731
        return run(self._conn, "put_blob", work, write=True)

    def get_blob(self, session_id: str, handle: str) -> Result[str | None, StoreError]:
        """The text kept under ``handle``, or None."""
        work = lambda conn: blobs.get_blob(conn, session_id, handle)  # noqa: E731
        return run(self._conn, "get_blob", work, write=False)

    def session_blobs(self, session_id: str) -> Result[dict[str, str], StoreError]:
        """Every offloaded text of a session by handle."""
        work = lambda conn: blobs.session_blobs(conn, session_id)  # noqa: E731
        return run(self._conn, "session_blobs", work, write=False)

    def put_usage(self, session_id: str, usage: UsageState) -> Result[None, StoreError]:
        """Save a session's usage, replacing the last saved state."""
        return run(
            self._conn, "put_usage", lambda c: sessions.put_usage(c, session_id, usage), write=True
        )

    def save_usage(self, session_id: str, usage: UsageState) -> None:
        """Best-effort `put_usage` for the engine's `UsageStore` protocol: a failure is dropped."""
        self.put_usage(session_id, usage)

    def load_usage(self, session_id: str) -> UsageState | None:
        """The saved usage of a session, or None if there is none or it cannot be read."""
        if self._conn is None:
            return None
        try:
            return sessions.load_usage(self._conn, session_id)
        except (sqlite3.Error, DamagedRow, ValueError, TypeError, AttributeError):
            return None
