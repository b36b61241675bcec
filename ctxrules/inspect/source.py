"""What the inspector reads from a store, read when shown: nodes by id, commits by chunks.

A long session is not read whole. Its graph is resumed (`Store.resume_session`): the ids
in one read, each node when first asked for. A resumed graph reads every node once more
than `WALK_AFTER` single nodes were asked of it (a walk, for an engine), so the window of
a long history is read through a fresh resumed graph every `PER_GRAPH` nodes.

Commits are read with their items in chunks read when first touched. The `Store` protocol
offers that for a session's last commit only (`last_commit(lazy=True)`); for the commits
before it the backends' shared reader is used (the same reads `last_commit` makes, by id),
and any other store falls back to `get_commit`. A ``get_commit(id, lazy=True)`` and a
``last_commit_id(session)`` in the protocol would make this module protocol-only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from returns.result import Failure, Result, Success

from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Graph, Status
from ctxrules.store.objects import commit_fields
from ctxrules.store.protocol import Store

#: Commits of at least this many items are read chunk by chunk when touched.
LAZY_FROM = 4_096
#: Nodes read through one resumed graph (it turns into a walk of every node after 512).
PER_GRAPH = 400


class NodeSource:
    """A stored session's nodes by id and position, each read once when first asked for."""

    def __init__(self, store: Store, session_id: str, kept: NodeSource | None = None) -> None:
        self.store, self.session_id = store, session_id
        self._graph: Graph | None = None
        self._used = PER_GRAPH
        self.known: dict[str, Call | None] = {}
        self._ids: Sequence[str] | None = None
        self.first_children: dict[str, str | None] = {}
        if kept is not None:
            # What a newer version of the session still holds: nodes are append-only but for
            # completing a running one, and a node's first child never changes once it has one.
            self.known = {
                i: c
                for i, c in kept.known.items()
                if c is not None and c.status is not Status.RUNNING
            }
            self.first_children = {i: c for i, c in kept.first_children.items() if c is not None}
        #: Nodes read from the store (what a test counts).
        self.reads = 0

    def _fresh(self) -> Graph:
        if self._graph is None or self._used >= PER_GRAPH:
            resumed = self.store.resume_session(self.session_id)
            if isinstance(resumed, Failure):
                raise LookupError(str(resumed.failure()))
            self._graph, self._used = resumed.unwrap().graph, 0
        return self._graph

    def ids(self) -> Sequence[str]:
        """Every node id in seq order (one read)."""
        if self._ids is None:
            self._ids = list(self._fresh().order)
        return self._ids

    def get(self, node_id: str) -> Call | None:
        """The node with this id, or None."""
        if node_id not in self.known:
            graph = self._fresh()
            self._used += 1
            self.reads += 1
            self.known[node_id] = graph.nodes.get(node_id)
        return self.known[node_id]

    def window(self, start: int, stop: int) -> dict[str, Call]:
        """The nodes at positions ``start`` to ``stop`` of the seq order, by id."""
        found = {}
        for node_id in self.ids()[start:stop]:
            call = self.get(node_id)
            if call is not None:
                found[node_id] = call
        return found

    def first_child(self, node_id: str) -> str | None:
        """The first node (by seq) whose predecessor is ``node_id``."""
        if node_id not in self.first_children:
            graph = self._fresh()
            self._used += 2  # the node and its edge list
            children = graph.children.get(node_id)
            self.first_children[node_id] = children[0] if children else None
        return self.first_children[node_id]


class CommitSource:
    """A session's commits by id, their chunks read when first touched; each read once."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._kept: dict[str, ContextCommit] = {}
        self._shared: dict[str, Any] = {}

    def last_id(self, session_id: str) -> str | None:
        """The id of the session's most recently stored commit (one small read)."""
        rows = _rows(self.store)
        if rows is None:
            last = self.store.last_commit(session_id, lazy=True).value_or(None)
            return last.id if last is not None else None
        row = rows(
            "SELECT id FROM commits WHERE session_id = ? ORDER BY seq DESC LIMIT 1", (session_id,)
        )
        return str(row[0]) if row is not None else None

    def for_head(self, session_id: str, node_id: str) -> str | None:
        """The newest commit stored for head ``node_id`` (one small read), or None.

        Raises `LookupError` on a store without the backends' shared rows (none can tell).
        """
        rows = _rows(self.store)
        if rows is None:
            raise LookupError("this store cannot find a commit by its head")
        row = rows(
            "SELECT id FROM commits WHERE session_id = ? AND head_node_id = ?"
            " ORDER BY seq DESC LIMIT 1",
            (session_id, node_id),
        )
        return str(row[0]) if row is not None else None

    def parent_id(self, commit_id: str) -> str | None:
        """The first parent of a stored commit, from its header alone (None: a root or unknown)."""
        kept = self._kept.get(commit_id)
        rows = _rows(self.store) if kept is None else None
        if rows is None:
            found = kept or self.store.get_commit(commit_id).value_or(None)
            return found.parent_ids[0] if found is not None and found.parent_ids else None
        row = rows("SELECT data FROM commits WHERE id = ?", (commit_id,))
        fields = commit_fields(row[0]) if row is not None else None
        parents = fields.get("parent_ids") if isinstance(fields, dict) else None
        return str(parents[0]) if isinstance(parents, list) and parents else None

    def get(self, commit_id: str) -> Result[ContextCommit, str]:
        """The commit, its header and tree read now and its chunks when touched."""
        kept = self._kept.get(commit_id)
        if kept is not None:
            return Success(kept)
        read = _lazy_reader(self.store, self._shared)
        found = read(commit_id) if read is not None else self.store.get_commit(commit_id)
        if isinstance(found, Failure):
            return Failure(str(found.failure()))
        self._kept[commit_id] = found.unwrap()
        return Success(found.unwrap())


def _rows(store: Store) -> Callable[[str, tuple[object, ...]], Any] | None:
    # One read of a row in the backend's own transaction (the backends share `StoreBase`).
    transaction = getattr(store, "_transaction", None)
    if transaction is None:
        return None

    def one(sql: str, params: tuple[object, ...]) -> Any:  # noqa: ANN401 - a database row
        return transaction(
            "inspect_read", lambda tx: Success(tx.rows.one(sql, params)), write=False
        ).value_or(None)

    return one


def _lazy_reader(
    store: Store, shared: dict[str, Any]
) -> Callable[[str], Result[ContextCommit, object]] | None:
    # The reader `last_commit(lazy=True)` uses, by id; its tree nodes shared between commits.
    transaction = getattr(store, "_transaction", None)
    source = getattr(store, "_read_items", None)
    if transaction is None or source is None:
        return None

    def read(commit_id: str) -> Result[ContextCommit, object]:
        def work(tx: Any) -> Any:  # noqa: ANN401 - a backend's transaction
            row = tx.rows.one("SELECT data FROM commits WHERE id = ?", (commit_id,))
            # A short commit is read whole (its chunks shared with the commits read before);
            # a long one by its tree, each chunk when touched.
            fields = commit_fields(row[0]) if row is not None else None
            length = fields.get("length", 0) if isinstance(fields, dict) else 0
            lazy = isinstance(length, int) and length >= LAZY_FROM
            reader = tx.reader(source=source if lazy else None)
            for name in ("items", "nodes", "chunks", "shares"):
                setattr(reader, name, shared.setdefault(name, getattr(reader, name)))
            return reader.get(commit_id)

        found: Result[ContextCommit, object] = transaction("get_commit", work, write=False)
        return found

    return read
