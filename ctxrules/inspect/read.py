"""Reading a store for the inspector: each session once per change, its views kept until it changes.

A session's version is what a writer changes on every call (node count, heads, the last
commit's id, the usage), read in a few small reads: the page polls it, and the views are
rebuilt only when it moved. A long session is read as far as the page shows it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from returns.result import Failure, Result, Success

from ctxrules.cache.profiles import anthropic, profile_for_model
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.commit.vector import AnyChunk
from ctxrules.dag import Role
from ctxrules.engine.frame import session_source
from ctxrules.inspect.delta import chunk_cache
from ctxrules.inspect.source import LAZY_FROM, PER_GRAPH, CommitSource, NodeSource
from ctxrules.inspect.views import (
    ItemTable,
    Json,
    Request,
    history_view,
    node_view,
    occupancy_view,
    prompt_cost,
    request_detail,
    request_row,
    requests_of,
    session_row,
)
from ctxrules.store.errors import LazyReadFailed
from ctxrules.store.protocol import Store
from ctxrules.store.sessions import SessionInfo
from ctxrules.tokens.usage import UsageState

#: What a read on demand raises when the store cannot answer (a node source, a chunk).
UNREAD = (LookupError, LazyReadFailed)
#: Rows of the history drawn at a time (the newest first; the page asks for earlier ones).
HISTORY_ROWS = 1_500
#: Requests read back from the newest (a session's cost and timeline cover these).
REQUEST_WINDOW = 2_000
#: Items of long commits (read by their trees) whose ids are checked before the walk stops.
HASHED_ITEMS = 800_000
#: Ancestors of the head walked, at most, to find the newest request's head.
NEAR_NODES = 2_000


@attrs.frozen
class SessionData:
    """One session as read at one version, with its views built."""

    version: str
    info: SessionInfo
    nodes: NodeSource
    heads: dict[str, str]
    commits: dict[str, ContextCommit]
    requests: list[Request]
    usage: UsageState | None
    overview: Json
    #: Whether requests before the first in ``requests`` were left unread.
    earlier: bool = False


def _model(nodes: NodeSource) -> str:
    # Context names an assistant node after the model that wrote it: the newest one says.
    ids = nodes.ids()
    for node_id in reversed(ids[-PER_GRAPH:]):
        call = nodes.get(node_id)
        if call is not None and call.role is Role.ASSISTANT and call.name:
            return call.name
    return ""


def _title(nodes: NodeSource) -> str:
    for node_id in nodes.ids()[:PER_GRAPH]:
        call = nodes.get(node_id)
        if call is not None and call.role is Role.USER:
            return " ".join(str(call.output_value()).split())
    return ""


class Reader:
    """The inspector's access to one store: sessions, versions and views, one caller at a time.

    ``window`` is the context window assumed for a session whose store does not record one.
    A session is read as the page shows it: the newest `HISTORY_ROWS` nodes, the requests
    with their rows (each diff reading the chunks that changed), details when asked.
    """

    def __init__(
        self,
        store: Store,
        window: int = 200_000,
        *,
        reopen: Callable[[Store], Store] | None = None,
        history_rows: int = HISTORY_ROWS,
        request_window: int = REQUEST_WINDOW,
    ) -> None:
        self.store, self.window = store, window
        self.history_rows, self.request_window = history_rows, request_window
        self._reopen = reopen
        self._lock = threading.Lock()
        self._cache: dict[str, SessionData] = {}
        self._commits = CommitSource(store)
        self._read, self.items_read = chunk_cache()

    def read_chunk(self, chunk: AnyChunk) -> Sequence[ContextItem]:
        """A commit chunk's items, read once for every view of this reader."""
        return self._read(chunk)

    def _infos(self) -> Result[dict[str, SessionInfo], str]:
        # A store opened before its writer started may need a new connection to see it.
        if self._reopen is not None:
            reopened = self._reopen(self.store)
            if reopened is not self.store:
                # What was read through the closed connection is read again through the new one.
                self.store, self._commits = reopened, CommitSource(reopened)
                self._cache.clear()
                self._read, self.items_read = chunk_cache()
        return self._listed()

    def _listed(self) -> Result[dict[str, SessionInfo], str]:
        listed = self.store.list_sessions()
        if isinstance(listed, Failure):
            return Failure(str(listed.failure()))
        return Success({info.id: info for info in listed.unwrap()})

    def _version(self, info: SessionInfo) -> str:
        # O(1) reads: the node count, the heads, the last commit's id and the usage.
        heads = self.store.heads(info.id).value_or({})
        last = self._commits.last_id(info.id)
        usage = self.store.load_usage(info.id)
        turns = (usage.turn_count, usage.compaction_count) if usage is not None else (0, 0)
        head = ",".join(f"{k}={v}" for k, v in sorted(heads.items()))
        return f"{info.node_count}|{head}|{last or '-'}|{turns[0]}.{turns[1]}"

    def _info(self, session_id: str) -> Result[SessionInfo, str]:
        infos = self._infos()
        if isinstance(infos, Failure):
            return Failure(infos.failure())
        info = infos.unwrap().get(session_id)
        return (
            Success(info)
            if info is not None
            else Failure(f"no session {session_id!r} in the store")
        )

    def version(self, session_id: str) -> Result[str, str]:
        """What changes whenever a writer stores something for the session."""
        with self._lock:
            return self._info(session_id).map(self._version)

    def sessions(self) -> Result[list[Json], str]:
        """The sessions list, oldest first."""
        with self._lock:
            infos = self._infos()
            if isinstance(infos, Failure):
                return Failure(infos.failure())
            rows = []
            for info in infos.unwrap().values():
                data = self._session(info)
                if isinstance(data, Failure):
                    return Failure(data.failure())
                rows.append(data.unwrap().overview["session"])
            return Success(rows)

    def session(self, session_id: str) -> Result[SessionData, str]:
        """The session at its current version (read again only if it changed)."""
        with self._lock:
            return self._info(session_id).bind(self._session)

    def _session(self, info: SessionInfo) -> Result[SessionData, str]:
        version = self._version(info)
        kept = self._cache.get(info.id)
        if kept is not None and kept.version == version:
            return Success(kept)
        heads = self.store.heads(info.id)
        if isinstance(heads, Failure):
            return Failure(str(heads.failure()))
        try:
            chain = self._chain(info.id)
            if isinstance(chain, Failure):
                return Failure(chain.failure())
            data = self._build(info, version, heads.unwrap(), chain.unwrap(), kept=kept)
        except UNREAD as error:
            return Failure(str(error))
        self._cache[info.id] = data
        return Success(data)

    def _chain(
        self, session_id: str
    ) -> Result[tuple[list[ContextCommit], ContextCommit | None, bool], str]:
        """The newest requests' commits, oldest first, the request before them, whether more.

        Walks first parents back from the last stored commit: each commit read once (its
        header and tree; its chunks when a diff touches them), kept for the next poll. The
        walk stops after `request_window` requests, or once the long commits read hold
        `HASHED_ITEMS` items: the store checks each one's id by hashing every item digest
        its tree names, so a commit of 100,000 items costs a tenth of a second or more.
        """
        newest: list[ContextCommit] = []
        heads_seen, hashed = 0, 0
        current = self._commits.last_id(session_id)
        while current is not None:
            if hashed >= HASHED_ITEMS and heads_seen >= 2:  # a request and the one before it
                break
            read = self._commits.get(current)
            if isinstance(read, Failure):
                return Failure(read.failure())
            commit = read.unwrap()
            if not newest or newest[-1].head_node_id != commit.head_node_id:
                heads_seen += 1
            if heads_seen > self.request_window + 1:
                break
            newest.append(commit)
            if len(commit.items) >= LAZY_FROM:
                hashed += len(commit.items)
            current = commit.parent_ids[0] if commit.parent_ids else None
        chain = list(reversed(newest))
        if current is None:
            return Success((chain, None, False))
        # The oldest group is the request before the window: only its last commit is kept.
        first_head = chain[0].head_node_id
        cut = next(i for i, c in enumerate(chain) if c.head_node_id != first_head)
        return Success((chain[cut:], chain[cut - 1], True))

    def _build(
        self,
        info: SessionInfo,
        version: str,
        heads: dict[str, str],
        read: tuple[list[ContextCommit], ContextCommit | None, bool],
        *,
        kept: SessionData | None,
    ) -> SessionData:
        chain, before, earlier = read
        nodes = NodeSource(self.store, info.id, kept.nodes if kept is not None else None)
        known = kept.requests if kept is not None else ()
        # Numbered from the oldest request read: with ``earlier`` the page says more came before.
        requests = requests_of(chain, known, before=before, read=self._read)
        usage = self.store.load_usage(info.id)
        fixed = usage.system_tokens + usage.tools_tokens if usage is not None else 0
        profile = profile_for_model(_model(nodes)) or anthropic()
        title = info.title or _title(nodes)
        ids = nodes.ids()
        ends = (nodes.get(ids[0]), nodes.get(ids[-1])) if ids else (None, None)
        row = session_row(
            info.id,
            title,
            session_source(info.metadata),
            ends,
            nodes=len(ids),
            requests=len(requests),
            cost=prompt_cost(requests, fixed, profile),
        )
        row["earlier_requests"] = earlier
        row["measured"] = (
            {
                "prompt": usage.cumulative_prompt_tokens,
                "completion": usage.cumulative_completion_tokens,
                "turns": usage.turn_count,
            }
            if usage is not None
            else None
        )
        head = self.store.get_head(info.id).value_or(None)
        commits = {c.id: c for c in chain}
        data = SessionData(version, info, nodes, heads, commits, requests, usage, {}, earlier)
        overview: Json = {
            "session": row,
            "version": version,
            "history": self._history(data, len(ids)),
            "requests": [request_row(r) for r in requests],
            "earlier_requests": earlier,
            # A retry, an edit or a rewind since the newest request: its rows are another branch's.
            "head_moved": bool(requests) and _off_branch(nodes, head, requests[-1].commit),
            "occupancy": occupancy_view(requests[-1].commit, usage, self.window)
            if requests
            else None,
            # The page opens the newest request first: it comes with the overview.
            "latest": self._detail(requests[-1]) if requests else None,
        }
        return attrs.evolve(data, overview=overview)

    def _history(self, data: SessionData, end: int) -> Json:
        nodes = data.nodes
        ids = nodes.ids()
        end = max(0, min(end, len(ids)))
        start = max(0, end - self.history_rows)
        window = nodes.window(start, end)
        shown = [i for i in ids[start:end] if i in window]
        return history_view(
            shown,
            window,
            nodes.first_child,
            data.heads,
            {c.head_node_id for c in data.commits.values() if c.head_node_id},
            start=start,
            total=len(ids),
        )

    def history(self, session_id: str, end: int) -> Result[Json, str]:
        """The history's rows before row ``end`` (at most `HISTORY_ROWS` of them)."""
        if end < 0:
            return Failure("end must be a row number")
        found = self.session(session_id)
        if isinstance(found, Failure):
            return found
        with self._lock:
            try:
                return Success(self._history(found.unwrap(), end))
            except UNREAD as error:
                return Failure(str(error))

    def request(self, session_id: str, index: int) -> Result[Json, str]:
        """One request's items and diff, with the rows of the items it names."""
        found = self.session(session_id)
        if isinstance(found, Failure):
            return found
        requests = found.unwrap().requests
        first = requests[0].index if requests else 0
        if not first <= index < first + len(requests):
            return Failure(f"no request {index} in session {session_id!r}")
        with self._lock:
            try:
                return Success(self._detail(requests[index - first]))
            except UNREAD as error:
                return Failure(str(error))

    def node(self, session_id: str, node_id: str) -> Result[Json, str]:
        """One node whole."""
        found = self.session(session_id)
        if isinstance(found, Failure):
            return found
        with self._lock:
            try:
                call = found.unwrap().nodes.get(node_id) if isinstance(node_id, str) else None
            except UNREAD as error:
                return Failure(str(error))
        if call is None:
            return Failure(f"no node {node_id!r} in session {session_id!r}")
        return Success(node_view(call))

    def close(self) -> None:
        """Close the store."""
        self.store.close()

    def _detail(self, request: Request) -> Json:
        table = ItemTable()
        detail = request_detail(request, table, read=self._read)
        return {"detail": detail, "table": table.rows}


def as_data(result: Result[Any, str]) -> tuple[int, Any]:
    """An HTTP status and JSON body for a read: 200 and the value, or 404 and the error."""
    if isinstance(result, Failure):
        return 404, {"error": result.failure()}
    return 200, result.unwrap()


def _off_branch(nodes: NodeSource, head: str | None, sent: ContextCommit) -> bool:
    """Whether ``head`` is neither the head of the commit ``sent`` nor after it on its branch.

    Walks back from ``head`` only while the nodes are newer than the sent head (seq grows
    along a branch): a message added since reads a node or two, a retry or a rewind as few.
    """
    target = nodes.get(sent.head_node_id) if sent.head_node_id else None
    node = nodes.get(head) if head is not None else None
    for _ in range(NEAR_NODES):
        if node is None or target is None or node.seq < target.seq:
            return True
        if node.id == target.id:
            return False
        before = node.predecessor or node.caller
        node = nodes.get(before) if before is not None else None
    return True
