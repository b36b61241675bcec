"""`Store`: what every backend offers, so the engine and the CLI never name one.

`SqliteStore` (one file, one machine) and `PostgresStore` (many workers, one server) both
satisfy it; `open_store` picks one from a URL. Every method is one transaction and returns
a `Result`; nothing raises on bad input or a database error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from returns.result import Result

from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Graph, Session, Status
from ctxrules.rules.references import ReferenceTracker
from ctxrules.store.errors import StoreError
from ctxrules.store.search import SearchHit
from ctxrules.store.sessions import SessionInfo
from ctxrules.store.turn import TurnWrite, TurnWritten
from ctxrules.tokens.usage import UsageState


@runtime_checkable
class Store(Protocol):
    """Sessions, append-only nodes, immutable commits, compare-and-set heads and usage.

    The guarantees hold in the database, for any writer: a stored node never changes
    except the one completion of a running node; a commit never changes; a head moves
    only from the head the mover saw, so of two workers appending to one session one
    wins and the other gets `HeadMoved` (reload and retry), never a fork.
    """

    def close(self) -> None:
        """Release the connection(s); later calls fail with `StoreClosed`."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def create_session(
        self,
        session_id: str,
        *,
        created_at: float = 0.0,
        title: str = "",
        metadata: Mapping[str, object] | None = None,
    ) -> Result[None, StoreError]:
        """Add a session; the same session again is a no-op, a different one `SessionExists`."""
        ...

    def list_sessions(self) -> Result[list[SessionInfo], StoreError]:
        """Every session, oldest first, with its node count."""
        ...

    def append_node(self, session_id: str, call: Call) -> Result[int, StoreError]:
        """Append ``call`` with the session's next seq; the same node again returns its seq."""
        ...

    def append_graph(self, session_id: str, graph: Graph) -> Result[int, StoreError]:
        """Store every node of ``graph`` not yet stored, in one transaction; the count added."""
        ...

    def append_at_head(
        self, session_id: str, call: Call, head_name: str = "main"
    ) -> Result[int, StoreError]:
        """Append ``call`` and move the head from its predecessor to it, atomically.

        A worker whose head went stale gets `HeadMoved` naming the new head and nothing is
        stored: it rebases its node on that head and retries. No fork, no lost node.
        """
        ...

    def complete_node(
        self, session_id: str, node_id: str, output: object, status: Status | str = Status.DONE
    ) -> Result[None, StoreError]:
        """Fill a running node's output and final status, exactly once."""
        ...

    def load_graph(self, session_id: str) -> Result[Graph, StoreError]:
        """The session's graph, rebuilt in seq order."""
        ...

    def load_session(self, session_id: str, head_name: str = "main") -> Result[Session, StoreError]:
        """The session: its graph, the named head (or None) and its running nodes."""
        ...

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
        """Store a session with its head (compare-and-set), commits and usage; nodes added."""
        ...

    def export_jsonl(self, session_id: str) -> Result[str, StoreError]:
        """The session's graph in the JSON Lines interchange (one node a line)."""
        ...

    def put_commit(self, commit: ContextCommit) -> Result[None, StoreError]:
        """Store a commit under its content id; storing it again is a no-op."""
        ...

    def get_commit(
        self, commit_id: str, *, check: bool = False
    ) -> Result[ContextCommit, StoreError]:
        """The commit with this id, or `UnknownCommit`; ``check`` rehashes every item."""
        ...

    def commits_for(
        self, session_id: str, *, check: bool = False
    ) -> Result[list[ContextCommit], StoreError]:
        """The session's commits in the order they were stored, sharing their chunks."""
        ...

    def resume_session(
        self, session_id: str, head_name: str = "main"
    ) -> Result[Session, StoreError]:
        """The session, its stored nodes and edges read when first touched (see `load_session`)."""
        ...

    def load_references(self, session_id: str) -> tuple[str, ReferenceTracker] | None:
        """The reference tracker kept with the session and the head it was observed up to, or None."""
        ...

    def last_commit(
        self, session_id: str, *, lazy: bool = False
    ) -> Result[ContextCommit | None, StoreError]:
        """The session's most recently stored commit, or None; ``lazy`` reads its chunks when touched."""
        ...

    def write_turn(self, turn: TurnWrite) -> Result[TurnWritten, StoreError]:
        """Store one turn's nodes, completions, head move, commits and usage, all or nothing."""
        ...

    def get_head(self, session_id: str, name: str = "main") -> Result[str | None, StoreError]:
        """The node id a head points at, or None."""
        ...

    def move_head(
        self, session_id: str, name: str, expected_old: str | None, new: str
    ) -> Result[None, StoreError]:
        """Compare-and-set: point ``name`` at ``new`` if it points at ``expected_old``."""
        ...

    def heads(self, session_id: str) -> Result[dict[str, str], StoreError]:
        """Every named head of the session, name to node id."""
        ...

    def put_blob(self, session_id: str, handle: str, text: str) -> Result[str, StoreError]:
        """Keep an offloaded original whole under ``handle``; its content digest."""
        ...

    def get_blob(self, session_id: str, handle: str) -> Result[str | None, StoreError]:
        """The original kept under ``handle``, or None."""
        ...

    def session_blobs(self, session_id: str) -> Result[dict[str, str], StoreError]:
        """Every offloaded original of the session by handle."""
        ...

    def search(
        self, query: str, session_id: str | None = None, limit: int = 20
    ) -> Result[list[SearchHit], StoreError]:
        """Nodes matching a full-text query, best first; bad syntax is `BadQuery`."""
        ...

    def put_usage(self, session_id: str, usage: UsageState) -> Result[None, StoreError]:
        """Save a session's usage, replacing the last saved state."""
        ...

    def save_usage(self, session_id: str, usage: UsageState) -> None:
        """Best-effort `put_usage` for the engine's `UsageStore` protocol."""
        ...

    def load_usage(self, session_id: str) -> UsageState | None:
        """The saved usage of a session, or None."""
        ...
