"""`StoreBase`: every public store operation written once, over a backend's transaction.

A backend supplies only its dialect: `_transaction` runs work in one of its transactions
and hands it a `Tx` (its rows, its node table, how a writer holds a session), `_search`
runs its full-text SQL, and `blob_column` says where it keeps an original's text.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import ClassVar, Self

from pyrsistent import pset
from returns.result import Failure, Result, Success

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Call, Graph, Session, Status, graph_to_jsonl
from ctxrules.rules.references import ReferenceTracker
from ctxrules.store import heads, nodes, objects, sessions, snapshot
from ctxrules.store import search as hits
from ctxrules.store.blobs import BlobColumn, get_blob, put_blob, session_blobs
from ctxrules.store.errors import LazyReadFailed, StoreError
from ctxrules.store.nodes import NodeTable
from ctxrules.store.references import load_references
from ctxrules.store.rows import Rows
from ctxrules.store.search import SearchHit
from ctxrules.store.sessions import SessionInfo
from ctxrules.store.stored_graph import StoredGraph
from ctxrules.store.turn import TurnWrite, TurnWritten
from ctxrules.store.tx import FreshWork, T, Tx, Work, reading, writing
from ctxrules.tokens.usage import UsageState


class StoreBase(abc.ABC):
    """The `Store` operations on any backend that supplies `_transaction` and `_search`."""

    __slots__ = ("_known",)

    #: Where the backend's ``blobs`` table keeps a text.
    blob_column: ClassVar[BlobColumn]

    def __init__(self) -> None:
        # Digests of commit objects known stored (written or read here): a hint that
        # spares a turn re-sending them; objects are never deleted, so it never goes stale.
        self._known = objects.KnownObjects()

    @abc.abstractmethod
    def _transaction(
        self, operation: str, work: Work[T], *, write: bool, durable: bool = True
    ) -> Result[T, StoreError]:
        """Run ``work`` in one transaction: committed on `Success`, else rolled back.

        A write with ``durable=False`` commits without waiting for the disk: it survives the
        process being killed, and the next durable commit makes it survive power loss too.
        """

    @abc.abstractmethod
    def _search(
        self, rows: Rows, query: str, session_id: str | None, limit: int
    ) -> Result[list[SearchHit], StoreError]:
        """The backend's full-text search, its arguments already checked."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection(s); later calls fail with `StoreClosed`."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _fresh(
        self, operation: str, work: FreshWork[T], *, durable: bool = True
    ) -> Result[T, StoreError]:
        """Run a write, and learn the object digests it wrote once its transaction commits."""
        fresh: list[str] = []
        self._known.settle(committed=False)  # nothing left over from a write that raised
        result = self._transaction(
            operation, lambda tx: work(tx, fresh), write=True, durable=durable
        )
        self._known.settle(committed=isinstance(result, Success))
        if isinstance(result, Success):
            self._known.update(fresh)
        return result

    # -- sessions and nodes ------------------------------------------------------------------

    def create_session(
        self,
        session_id: str,
        *,
        created_at: float = 0.0,
        title: str = "",
        metadata: Mapping[str, object] | None = None,
    ) -> Result[None, StoreError]:
        """Add a session; the same again is a no-op, a different one `SessionExists`."""
        return self._transaction(
            "create_session",
            lambda tx: sessions.create_session(tx.rows, session_id, created_at, title, metadata),
            write=True,
        )

    def list_sessions(self) -> Result[list[SessionInfo], StoreError]:
        """Every session, oldest first, with its node count."""
        return self._transaction(
            "list_sessions", lambda tx: sessions.list_sessions(tx.rows), write=False
        )

    def append_node(self, session_id: str, call: Call) -> Result[int, StoreError]:
        """Append ``call`` with the session's next seq, taken while the session is held."""
        work = writing(session_id, lambda tx: nodes.append_node(tx.nodes, session_id, call))
        return self._transaction("append_node", work, write=True)

    def append_graph(self, session_id: str, graph: Graph) -> Result[int, StoreError]:
        """Store the nodes of ``graph`` not yet stored, in one transaction; the count added."""
        work = writing(session_id, lambda tx: nodes.append_graph(tx.nodes, session_id, graph))
        return self._transaction("append_graph", work, write=True)

    def append_at_head(
        self, session_id: str, call: Call, head_name: str = "main"
    ) -> Result[int, StoreError]:
        """Append ``call`` and move the head from its predecessor to it; `HeadMoved` if stale."""
        work = lambda tx: snapshot.append_at_head(tx, session_id, call, head_name)  # noqa: E731
        return self._transaction("append_at_head", writing(session_id, work), write=True)

    def complete_node(
        self, session_id: str, node_id: str, output: object, status: Status | str = Status.DONE
    ) -> Result[None, StoreError]:
        """Fill a running node's output and final status, exactly once."""
        work = writing(
            session_id,
            lambda tx: nodes.complete_node(tx.nodes, session_id, node_id, output, status),
        )
        return self._transaction("complete_node", work, write=True)

    def load_graph(self, session_id: str) -> Result[Graph, StoreError]:
        """The session's graph, rebuilt by `Graph.append` in seq order."""
        work = reading(session_id, lambda tx: nodes.load_graph(tx.nodes, session_id))
        return self._transaction("load_graph", work, write=False)

    def load_session(self, session_id: str, head_name: str = "main") -> Result[Session, StoreError]:
        """The session: its graph, the head named ``head_name`` (or None) and running nodes."""

        def work(tx: Tx) -> Result[Session, StoreError]:
            # The head is read first: it only ever points at a stored node and nodes are
            # append-only, so the graph read after holds it even without one snapshot.
            head = heads.get_head(tx.rows, session_id, head_name)
            return nodes.load_graph(tx.nodes, session_id).map(
                lambda graph: Session(
                    session_id,
                    graph,
                    head,
                    pset(i for i, n in graph.nodes.items() if n.status is Status.RUNNING),
                )
            )

        return self._transaction("load_session", reading(session_id, work), write=False)

    def resume_session(
        self, session_id: str, head_name: str = "main"
    ) -> Result[Session, StoreError]:
        """The session as `load_session` gives it, its stored nodes and edges read when first touched.

        One read takes the head, the node count, the running nodes and the roots (each by
        index); a node or an edge list is read, in a read of its own, when the session
        first asks for it, and a walk of every node reads them all in one pass. A read
        that fails then raises `LazyReadFailed`.
        """

        def work(tx: Tx) -> Result[Session, StoreError]:
            head = heads.get_head(tx.rows, session_id, head_name)
            row = tx.rows.one(
                "SELECT coalesce(max(seq), -1) + 1 FROM nodes WHERE session_id = ?", (session_id,)
            )
            size = int(row[0]) if row is not None else 0
            running = tx.nodes.marked(session_id, "running", size)
            roots = tx.nodes.marked(session_id, "roots", size)
            graph = StoredGraph(self._read_nodes, session_id, size).graph(roots)
            return Success(Session(session_id, graph, head, pset(running)))

        return self._transaction("resume_session", reading(session_id, work), write=False)

    def _read_nodes(self, operation: str, work: Callable[[NodeTable], T]) -> T:
        """``work`` on the node table in a read of its own (a resumed graph's source)."""
        read = self._transaction(operation, lambda tx: Success(work(tx.nodes)), write=False)
        if isinstance(read, Failure):
            raise LazyReadFailed(read.failure())
        return read.unwrap()

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
        """Store a session (created if missing) with its head, commits and usage; nodes added.

        Nodes already stored are skipped and commits go parents first. The head moves by
        compare-and-set from ``expected_head`` unless it already points at ``session.head``,
        so saving the same session twice is a no-op.
        """
        batch = tuple(commits)
        return self._fresh(
            "save_session",
            lambda tx, fresh: snapshot.save_session(
                tx,
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
        """Store one turn (nodes, completions, head, commits, usage), all or nothing.

        A turn with ``durable=False`` commits without waiting for the disk (`_transaction`).
        """
        work = lambda tx, fresh: snapshot.write_turn(tx, turn, self._known, fresh)  # noqa: E731
        return self._fresh("write_turn", work, durable=turn.durable)

    def export_jsonl(self, session_id: str) -> Result[str, StoreError]:
        """The session's graph in the JSON Lines interchange (one node a line)."""
        return self.load_graph(session_id).map(graph_to_jsonl)

    # -- commits and heads -------------------------------------------------------------------

    def put_commit(self, commit: ContextCommit) -> Result[None, StoreError]:
        """Store a commit and the objects it names not stored yet; a stored id is a no-op."""

        def work(tx: Tx, fresh: list[str]) -> Result[None, StoreError]:
            refused = tx.hold(commit.session_id)
            if refused is not None:
                return Failure(refused)
            put = objects.put_commit(tx.rows, commit, self._known)
            return put.map(lambda written: fresh.extend(written.digests))

        return self._fresh("put_commit", work)

    def get_commit(
        self, commit_id: str, *, check: bool = False
    ) -> Result[ContextCommit, StoreError]:
        """The commit with this id (its id recomputed), or `UnknownCommit`; ``check`` rehashes items."""
        work = lambda tx: tx.reader(check=check).get(commit_id)  # noqa: E731
        return self._transaction("get_commit", work, write=False)

    def commits_for(
        self, session_id: str, *, check: bool = False
    ) -> Result[list[ContextCommit], StoreError]:
        """The session's commits in the order they were stored, sharing their chunks."""
        work = reading(session_id, lambda tx: tx.reader(check=check).session(session_id))
        return self._transaction("commits_for", work, write=False)

    def last_commit(
        self, session_id: str, *, lazy: bool = False
    ) -> Result[ContextCommit | None, StoreError]:
        """The session's most recently stored commit (what a resumed engine starts from).

        With ``lazy`` only its header and tree are read: each 64-item chunk is read from the
        store when first touched (its items hashed and compared), so a resumed session reads
        what its next requests show. A chunk that cannot be read then raises `LazyReadFailed`.
        """
        source = self._read_items if lazy else None

        def work(tx: Tx) -> Result[tuple[ContextCommit | None, list[str], int], StoreError]:
            reader = tx.reader(source=source)
            return reader.last(session_id).map(
                lambda commit: (
                    commit,
                    list(reader.digests()),
                    reader.depths.get(commit.id, objects.MAX_CHAIN) if commit else 0,
                )
            )

        read = self._transaction("last_commit", reading(session_id, work), write=False)
        if isinstance(read, Success):
            commit, digests, depth = read.unwrap()
            self._known.update(digests)
            if commit is not None:
                # The next commit of a resumed session may be stored as its extension.
                self._known.remember(commit.id, commit.items, depth)
        return read.map(lambda found: found[0])

    def _read_items(self, digests: Sequence[str]) -> Mapping[str, ContextItem]:
        """The stored items with these digests, in a read of their own (a lazy chunk's source)."""

        def work(tx: Tx) -> Result[dict[str, ContextItem], StoreError]:
            return Success(tx.reader().read_items(digests))

        read = self._transaction("read_chunk", work, write=False)
        if isinstance(read, Failure):
            raise LazyReadFailed(read.failure())
        return read.unwrap()

    def get_head(self, session_id: str, name: str = "main") -> Result[str | None, StoreError]:
        """The node id a head points at, or None if the session has no such head."""
        work = reading(session_id, lambda tx: Success(heads.get_head(tx.rows, session_id, name)))
        return self._transaction("get_head", work, write=False)

    def move_head(
        self, session_id: str, name: str, expected_old: str | None, new: str
    ) -> Result[None, StoreError]:
        """Compare-and-set: a mismatch is `HeadMoved` naming the actual head (reload, retry)."""
        refused = heads.bad_name(name)
        if refused is not None:
            return Failure(refused)
        work = writing(
            session_id, lambda tx: heads.move_head(tx.rows, session_id, name, expected_old, new)
        )
        return self._transaction("move_head", work, write=True)

    def heads(self, session_id: str) -> Result[dict[str, str], StoreError]:
        """Every named head of the session, name to node id (what `ctxrules migrate` copies)."""
        work = reading(session_id, lambda tx: Success(heads.all_heads(tx.rows, session_id)))
        return self._transaction("heads", work, write=False)

    # -- search and usage --------------------------------------------------------------------

    def search(
        self, query: str, session_id: str | None = None, limit: int = 20
    ) -> Result[list[SearchHit], StoreError]:
        """Nodes matching a query in FTS5 syntax, best first; use `literal` for text as typed."""

        def work(tx: Tx) -> Result[list[SearchHit], StoreError]:
            refused = hits.refused(tx.rows, query, session_id, limit)
            if refused is not None:
                return Failure(refused)
            return self._search(tx.rows, query, session_id, limit)

        return self._transaction("search", work, write=False)

    # -- offloaded originals (the `BlobStore` protocol of ctxrules.recall) --------------------

    def put_blob(self, session_id: str, handle: str, text: str) -> Result[str, StoreError]:
        """Keep ``text`` whole under ``handle``, content-addressed; returns its digest."""
        column = self.blob_column
        work = writing(session_id, lambda tx: put_blob(tx.rows, column, session_id, handle, text))
        return self._transaction("put_blob", work, write=True)

    def get_blob(self, session_id: str, handle: str) -> Result[str | None, StoreError]:
        """The whole original under ``handle``: a text put there, else its stored node's; or None."""
        column = self.blob_column

        def work(tx: Tx) -> Result[str | None, StoreError]:
            kept = get_blob(tx.rows, column, session_id, handle)
            if isinstance(kept, Success) and kept.unwrap() is None:
                return nodes.handle_original(tx.nodes, session_id, handle)
            return kept

        return self._transaction("get_blob", reading(session_id, work), write=False)

    def session_blobs(self, session_id: str) -> Result[dict[str, str], StoreError]:
        """Every offloaded text of a session by handle."""
        column = self.blob_column
        work = reading(session_id, lambda tx: session_blobs(tx.rows, column, session_id))
        return self._transaction("session_blobs", work, write=False)

    def put_usage(self, session_id: str, usage: UsageState) -> Result[None, StoreError]:
        """Save a session's usage, replacing the last saved state."""
        work = lambda tx: sessions.put_usage(tx.rows, session_id, usage)  # noqa: E731
        return self._transaction("put_usage", work, write=True)

    def save_usage(self, session_id: str, usage: UsageState) -> None:
        """Best-effort `put_usage` for the engine's `UsageStore` protocol: a failure is dropped."""
        self.put_usage(session_id, usage)

    def load_references(self, session_id: str) -> tuple[str, ReferenceTracker] | None:
        """The reference tracker kept with the session and the head it was observed up to, or None."""
        work = lambda tx: Success(load_references(tx.rows, session_id))  # noqa: E731
        return self._transaction("load_references", work, write=False).value_or(None)

    def load_usage(self, session_id: str) -> UsageState | None:
        """The saved usage of a session, or None if there is none or it cannot be read."""
        work = lambda tx: sessions.load_usage(tx.rows, session_id)  # noqa: E731
        return self._transaction("load_usage", work, write=False).value_or(None)
