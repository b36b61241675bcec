"""`PostgresStore`: the store for many workers on many machines, on one PostgreSQL database.

Each public method is one transaction on a pooled connection and returns a `Result`;
psycopg errors become `PostgresFailed` at this boundary and never escape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, Self

from psycopg_pool import ConnectionPool
from pyrsistent import pset
from returns.result import Failure, Result, Success

from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Graph, Session, Status, graph_to_jsonl
from ctxrules.store import objects
from ctxrules.store.commits import parents_first
from ctxrules.store.errors import InvalidArgument, StoreError
from ctxrules.store.postgres import advance, blobs, nodes, records
from ctxrules.store.postgres import search as fts
from ctxrules.store.postgres.connection import Conn, T, Work, lock_session, open_pool, run
from ctxrules.store.postgres.rows import PgRows
from ctxrules.store.search import SearchHit
from ctxrules.store.sessions import SessionInfo
from ctxrules.store.turn import TurnSteps, TurnWrite, TurnWritten, apply_turn
from ctxrules.tokens.usage import UsageState


def _writing(session_id: str, work: Work[T]) -> Work[T]:
    # Lock first: every read the write bases itself on happens after the lock is held.
    def locked(conn: Conn) -> Result[T, StoreError]:
        missing = lock_session(conn, session_id)
        return Failure(missing) if missing is not None else work(conn)

    return locked


def _reading(session_id: str, work: Work[T]) -> Work[T]:
    def checked(conn: Conn) -> Result[T, StoreError]:
        missing = records.require_session(conn, session_id)
        return Failure(missing) if missing is not None else work(conn)

    return checked


class PostgresStore:
    """Sessions, nodes, commits, heads and usage in one PostgreSQL database (or schema).

    Writers of one session queue on that session's row lock, so seqs stay dense and a
    head moves only by compare-and-set; writers of different sessions run in parallel.
    """

    __slots__ = ("_known", "_pool", "dsn")

    def __init__(self, pool: ConnectionPool[Any], dsn: str) -> None:
        self._pool: ConnectionPool[Any] | None = pool
        self.dsn = dsn
        # Digests of commit objects known stored (see `SqliteStore`): objects are never
        # deleted, so a digest learnt from a committed transaction stays true.
        self._known: set[str] = set()

    def _run_fresh(
        self, operation: str, work: Callable[[Conn, list[str]], Result[T, StoreError]]
    ) -> Result[T, StoreError]:
        """Run ``work``, and learn the object digests it wrote once its transaction commits."""
        fresh: list[str] = []
        result = run(self._pool, operation, lambda conn: work(conn, fresh))
        if isinstance(result, Success):
            self._known.update(fresh)
        return result

    @classmethod
    def open(
        cls, dsn: str, *, min_size: int = 1, max_size: int = 4, timeout: float = 30.0
    ) -> Result[PostgresStore, StoreError]:
        """Connect to ``dsn`` (a ``postgresql://`` URL) and migrate its schema to this version.

        The pool keeps ``min_size`` to ``max_size`` connections; a call waits up to
        ``timeout`` seconds for one. The schema goes where the URL's ``search_path`` says.
        """
        for name, value in (("min_size", min_size), ("max_size", max_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                return Failure(InvalidArgument(name, repr(value), "an integer >= 1"))
        if min_size > max_size:
            return Failure(InvalidArgument("min_size", repr(min_size), f"<= max_size={max_size}"))
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            return Failure(InvalidArgument("timeout", repr(timeout), "seconds > 0"))
        opened = open_pool(dsn, min_size=min_size, max_size=max_size, timeout=float(timeout))
        return opened.map(lambda pool: cls(pool, dsn))

    def close(self) -> None:
        """Close the pool; later calls fail with `StoreClosed`. Closing twice is fine."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

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
        state = "open" if self._pool is not None else "closed"
        return f"PostgresStore({self.dsn.partition('?')[0]!r}, {state})"

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
            self._pool,
            "create_session",
            lambda c: records.create_session(c, session_id, created_at, title, metadata),
        )

    def list_sessions(self) -> Result[list[SessionInfo], StoreError]:
        """Every session, oldest first, with its node count."""
        return run(self._pool, "list_sessions", records.list_sessions)

    def append_node(self, session_id: str, call: Call) -> Result[int, StoreError]:
        """Append ``call`` with the session's next seq, taken under the session's lock.

        The same node appended again returns its seq; another node under a stored id is
        `NodeConflict`; an unknown edge is `DagRefused`.
        """
        work = _writing(session_id, lambda c: nodes.append_node(c, session_id, call))
        return run(self._pool, "append_node", work)

    def append_graph(self, session_id: str, graph: Graph) -> Result[int, StoreError]:
        """Store every node of ``graph`` not yet stored, in one transaction; the count added."""
        work = _writing(session_id, lambda c: nodes.append_graph(c, session_id, graph))
        return run(self._pool, "append_graph", work)

    def append_at_head(
        self, session_id: str, call: Call, head_name: str = "main"
    ) -> Result[int, StoreError]:
        """Append ``call`` and move the head from its predecessor to it, in one transaction.

        If the head is no longer ``call.predecessor`` nothing is stored and the result is
        `HeadMoved` naming the new head: rebase and retry.
        """
        return run(
            self._pool,
            "append_at_head",
            lambda conn: advance.append_at_head(conn, session_id, call, head_name),
        )

    def complete_node(
        self, session_id: str, node_id: str, output: object, status: Status | str = Status.DONE
    ) -> Result[None, StoreError]:
        """Fill a running node's output and final status, exactly once."""
        work = _writing(
            session_id, lambda c: nodes.complete_node(c, session_id, node_id, output, status)
        )
        return run(self._pool, "complete_node", work)

    def load_graph(self, session_id: str) -> Result[Graph, StoreError]:
        """The session's graph, rebuilt by `Graph.append` in seq order."""
        work = _reading(session_id, lambda c: nodes.load_graph(c, session_id))
        return run(self._pool, "load_graph", work)

    def load_session(self, session_id: str, head_name: str = "main") -> Result[Session, StoreError]:
        """The session: its graph, the head named ``head_name`` (or None) and running nodes."""

        def work(conn: Conn) -> Result[Session, StoreError]:
            # REPEATABLE READ is not needed: the head is read first and only ever points
            # at a stored node, and nodes are append-only, so the graph read after holds it.
            head = records.get_head(conn, session_id, head_name).unwrap()
            return nodes.load_graph(conn, session_id).map(
                lambda graph: Session(
                    session_id,
                    graph,
                    head,
                    pset(i for i, n in graph.nodes.items() if n.status is Status.RUNNING),
                )
            )

        return run(self._pool, "load_session", _reading(session_id, work))

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

        As `SqliteStore.save_session`: the head moves by compare-and-set from
        ``expected_head`` unless it already points at ``session.head``.
        """
        batch = tuple(commits)
        session_id = session.session_id

        def work(conn: Conn, fresh: list[str]) -> Result[int, StoreError]:
            if records.require_session(conn, session_id) is not None:
                created = records.create_session(conn, session_id, created_at, title, None)
                if isinstance(created, Failure):
                    return Failure(created.failure())
            missing = lock_session(conn, session_id)
            if missing is not None:
                return Failure(missing)
            added = nodes.append_graph(conn, session_id, session.graph)
            if isinstance(added, Failure) or session.head is None:
                return added.bind(
                    lambda n: self._rest(conn, batch, session_id, usage, n, fresh=fresh)
                )
            if records.get_head(conn, session_id, head_name).unwrap() != session.head:
                moved = records.move_head(conn, session_id, head_name, expected_head, session.head)
                if isinstance(moved, Failure):
                    return Failure(moved.failure())
            return added.bind(lambda n: self._rest(conn, batch, session_id, usage, n, fresh=fresh))

        return self._run_fresh("save_session", work)

    def _rest(
        self,
        conn: Conn,
        batch: tuple[ContextCommit, ...],
        session_id: str,
        usage: UsageState | None,
        added: int,
        *,
        fresh: list[str],
    ) -> Result[int, StoreError]:
        for commit in parents_first(batch):
            put = objects.put_commit(PgRows(conn), commit, self._known)
            if isinstance(put, Failure):
                return Failure(put.failure())
            fresh.extend(put.unwrap().digests)
        if usage is not None:
            records.put_usage(conn, session_id, usage)
        return Success(added)

    def write_turn(self, turn: TurnWrite) -> Result[TurnWritten, StoreError]:
        """Store one turn (nodes, completions, head, commits, usage) in one transaction.

        All or nothing, under the session's lock: a `HeadMoved` or any refusal stores none.
        """

        def work(conn: Conn, fresh: list[str]) -> Result[TurnWritten, StoreError]:
            missing = lock_session(conn, turn.session_id)
            if missing is not None:
                return Failure(missing)
            steps = TurnSteps(
                PgRows(conn),
                lambda sid, call: nodes.append_node(conn, sid, call),
                lambda sid, node_id, out, status: nodes.complete_node(
                    conn, sid, node_id, out, status
                ),
                lambda sid, name, old, new: records.move_head(conn, sid, name, old, new),
                lambda sid, usage: records.put_usage(conn, sid, usage),
            )
            return apply_turn(steps, turn, self._known, fresh)

        return self._run_fresh("write_turn", work)

    def export_jsonl(self, session_id: str) -> Result[str, StoreError]:
        """The session's graph in the library's JSON Lines interchange (one node a line)."""
        return self.load_graph(session_id).map(graph_to_jsonl)

    # -- commits and heads -------------------------------------------------------------------

    def put_commit(self, commit: ContextCommit) -> Result[None, StoreError]:
        """Store a commit under its content id; storing it again is a no-op."""

        def work(conn: Conn, fresh: list[str]) -> Result[None, StoreError]:
            missing = lock_session(conn, commit.session_id)
            if missing is not None:
                return Failure(missing)
            put = objects.put_commit(PgRows(conn), commit, self._known)
            return put.map(lambda written: fresh.extend(written.digests))

        return self._run_fresh("put_commit", work)

    def get_commit(
        self, commit_id: str, *, check: bool = False
    ) -> Result[ContextCommit, StoreError]:
        """The commit with this id (its id recomputed from its content), or `UnknownCommit`.

        ``check`` also recomputes every item's digest from its content (for ``verify``).
        """
        work = lambda c: objects.CommitReader(PgRows(c), check=check).get(commit_id)  # noqa: E731
        return run(self._pool, "get_commit", work)

    def commits_for(
        self, session_id: str, *, check: bool = False
    ) -> Result[list[ContextCommit], StoreError]:
        """The session's commits in the order they were stored, sharing their chunks."""
        work = _reading(
            session_id, lambda c: objects.CommitReader(PgRows(c), check=check).session(session_id)
        )
        return run(self._pool, "commits_for", work)

    def last_commit(self, session_id: str) -> Result[ContextCommit | None, StoreError]:
        """The session's most recently stored commit (what a resumed engine starts from)."""
        work = _reading(session_id, lambda c: objects.CommitReader(PgRows(c)).last(session_id))
        read = run(self._pool, "last_commit", work)
        commit = read.value_or(None)
        if commit is not None:
            self._known.update(objects.object_digests(commit.items))
        return read

    def get_head(self, session_id: str, name: str = "main") -> Result[str | None, StoreError]:
        """The node id a head points at, or None if the session has no such head."""
        work = _reading(session_id, lambda c: records.get_head(c, session_id, name))
        return run(self._pool, "get_head", work)

    def move_head(
        self, session_id: str, name: str, expected_old: str | None, new: str
    ) -> Result[None, StoreError]:
        """Compare-and-set: point ``name`` at ``new`` if it points at ``expected_old``.

        A mismatch is `HeadMoved` naming the actual head; the mover reloads and retries.
        """
        if not name:
            return Failure(InvalidArgument("name", "''", "a non-empty head name such as 'main'"))
        work = _writing(
            session_id, lambda c: records.move_head(c, session_id, name, expected_old, new)
        )
        return run(self._pool, "move_head", work)

    # -- search and usage --------------------------------------------------------------------

    def search(
        self, query: str, session_id: str | None = None, limit: int = 20
    ) -> Result[list[SearchHit], StoreError]:
        """Nodes matching a query in FTS5 syntax, best first, in one session or all."""
        return run(self._pool, "search", lambda c: fts.search(c, query, session_id, limit))

    # -- offloaded originals (the `BlobStore` protocol of ctxrules.recall) --------------------

    def put_blob(self, session_id: str, handle: str, text: str) -> Result[str, StoreError]:
        """Keep ``text`` whole under ``handle``, content-addressed; returns its digest."""
        work = _writing(session_id, lambda c: blobs.put_blob(c, session_id, handle, text))
        return run(self._pool, "put_blob", work)

    def get_blob(self, session_id: str, handle: str) -> Result[str | None, StoreError]:
        """The text kept under ``handle``, or None."""
        work = _reading(session_id, lambda c: blobs.get_blob(c, session_id, handle))
        return run(self._pool, "get_blob", work)

    def session_blobs(self, session_id: str) -> Result[dict[str, str], StoreError]:
        """Every offloaded text of a session by handle."""
        work = _reading(session_id, lambda c: blobs.session_blobs(c, session_id))
        return run(self._pool, "session_blobs", work)

    def put_usage(self, session_id: str, usage: UsageState) -> Result[None, StoreError]:
        """Save a session's usage, replacing the last saved state."""
        return run(self._pool, "put_usage", lambda c: records.put_usage(c, session_id, usage))

    def save_usage(self, session_id: str, usage: UsageState) -> None:
        """Best-effort `put_usage` for the engine's `UsageStore` protocol: a failure is dropped."""
        self.put_usage(session_id, usage)

    def load_usage(self, session_id: str) -> UsageState | None:
        """The saved usage of a session, or None if there is none or it cannot be read."""
        return run(self._pool, "load_usage", lambda c: records.load_usage(c, session_id)).value_or(
            None
        )
