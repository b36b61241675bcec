"""Reading a store for the inspector: each session once per change, its views kept until it changes.

A session's version is what a writer changes on every call (node count, heads, the last
commit, the usage): the page polls it, and the views are rebuilt only when it moved.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import attrs
from returns.result import Failure, Result, Success

from ctxrules.cache.profiles import anthropic, profile_for_model
from ctxrules.cli.listing import first_user_text
from ctxrules.cli.show import timeline
from ctxrules.commit import ContextCommit
from ctxrules.dag import Graph, Role
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
from ctxrules.store.protocol import Store
from ctxrules.store.sessions import SessionInfo
from ctxrules.tokens.usage import UsageState


@attrs.frozen
class SessionData:
    """One session as read at one version, with its views built."""

    version: str
    info: SessionInfo
    graph: Graph
    commits: dict[str, ContextCommit]
    requests: list[Request]
    usage: UsageState | None
    overview: Json


def _model(graph: Graph) -> str:
    # Context names an assistant node after the model that wrote it.
    assistants = (graph.nodes[i] for i in reversed(graph.order))
    return next((c.name for c in assistants if c.role is Role.ASSISTANT and c.name), "")


class Reader:
    """The inspector's access to one store: sessions, versions and views, one caller at a time.

    ``window`` is the context window assumed for a session whose store does not record one.
    """

    def __init__(
        self,
        store: Store,
        window: int = 200_000,
        *,
        reopen: Callable[[Store], Store] | None = None,
    ) -> None:
        self.store, self.window = store, window
        self._reopen = reopen
        self._lock = threading.Lock()
        self._cache: dict[str, SessionData] = {}

    def _infos(self) -> Result[dict[str, SessionInfo], str]:
        # A store opened before its writer started may need a new connection to see it.
        if self._reopen is not None:
            self.store = self._reopen(self.store)
        return self._listed()

    def _listed(self) -> Result[dict[str, SessionInfo], str]:
        listed = self.store.list_sessions()
        if isinstance(listed, Failure):
            return Failure(str(listed.failure()))
        return Success({info.id: info for info in listed.unwrap()})

    def _version(self, info: SessionInfo) -> str:
        heads = self.store.heads(info.id).value_or({})
        last = self.store.last_commit(info.id).value_or(None)
        usage = self.store.load_usage(info.id)
        turns = (usage.turn_count, usage.compaction_count) if usage is not None else (0, 0)
        head = ",".join(f"{k}={v}" for k, v in sorted(heads.items()))
        return f"{info.node_count}|{head}|{last.id if last else '-'}|{turns[0]}.{turns[1]}"

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
        graph = self.store.load_graph(info.id)
        commits = self._commits(info.id, kept)
        heads = self.store.heads(info.id)
        for result in (graph, commits, heads):
            if isinstance(result, Failure):
                return Failure(str(result.failure()))
        data = self._build(
            info, version, graph.unwrap(), commits.unwrap(), heads.unwrap(), kept=kept
        )
        self._cache[info.id] = data
        return Success(data)

    def _commits(
        self, session_id: str, kept: SessionData | None
    ) -> Result[dict[str, ContextCommit], object]:
        """Every commit the first time; then the ones stored since, from the last one back.

        A writer stores a turn's commits after their parents, so walking back from the last
        stored commit to one already read finds what is new in O(new commits).
        """
        if kept is None:
            return self.store.commits_for(session_id).map(lambda cs: {c.id: c for c in cs})
        known = dict(kept.commits)
        last = self.store.last_commit(session_id)
        if isinstance(last, Failure):
            return Failure(last.failure())
        waiting = [last.unwrap()] if last.unwrap() is not None else []
        while waiting:
            commit = waiting.pop()
            if commit is None or commit.id in known:
                continue
            known[commit.id] = commit
            for parent in commit.parent_ids:
                if parent not in known:
                    read = self.store.get_commit(parent)
                    if isinstance(read, Failure):
                        return Failure(read.failure())
                    waiting.append(read.unwrap())
        return Success(known)

    def _build(
        self,
        info: SessionInfo,
        version: str,
        graph: Graph,
        commits: dict[str, ContextCommit],
        heads: dict[str, str],
        *,
        kept: SessionData | None,
    ) -> SessionData:
        chain = list(reversed(timeline(list(commits.values()), graph, heads.get("main"))))
        requests = requests_of(chain, kept.requests if kept is not None else ())
        usage = self.store.load_usage(info.id)
        fixed = usage.system_tokens + usage.tools_tokens if usage is not None else 0
        profile = profile_for_model(_model(graph)) or anthropic()
        title = info.title or first_user_text(graph)
        row = session_row(
            info.id,
            title,
            str(info.metadata.get("format", "-")),
            graph,
            requests=len(requests),
            cost=prompt_cost(requests, fixed, profile),
        )
        row["measured"] = (
            {
                "prompt": usage.cumulative_prompt_tokens,
                "completion": usage.cumulative_completion_tokens,
                "turns": usage.turn_count,
            }
            if usage is not None
            else None
        )
        overview: Json = {
            "session": row,
            "version": version,
            "history": history_view(
                graph, heads, {c.head_node_id for c in commits.values() if c.head_node_id}
            ),
            "requests": [request_row(r) for r in requests],
            "occupancy": occupancy_view(requests[-1].commit, usage, self.window)
            if requests
            else None,
            # The page opens the newest request first: it comes with the overview.
            "latest": _detail(requests[-1]) if requests else None,
        }
        return SessionData(version, info, graph, commits, requests, usage, overview)

    def request(self, session_id: str, index: int) -> Result[Json, str]:
        """One request's items and diff, with the rows of the items it names."""
        found = self.session(session_id)
        if isinstance(found, Failure):
            return found
        requests = found.unwrap().requests
        if not 0 <= index < len(requests):
            return Failure(f"no request {index} in session {session_id!r}")
        return Success(_detail(requests[index]))

    def node(self, session_id: str, node_id: str) -> Result[Json, str]:
        """One node whole."""
        found = self.session(session_id)
        if isinstance(found, Failure):
            return found
        call = found.unwrap().graph.nodes.get(node_id)
        if call is None:
            return Failure(f"no node {node_id!r} in session {session_id!r}")
        return Success(node_view(call))

    def close(self) -> None:
        """Close the store."""
        self.store.close()


def _detail(request: Request) -> Json:
    table = ItemTable()
    detail = request_detail(request, table)
    return {"detail": detail, "table": table.rows}


def as_data(result: Result[Any, str]) -> tuple[int, Any]:
    """An HTTP status and JSON body for a read: 200 and the value, or 404 and the error."""
    if isinstance(result, Failure):
        return 404, {"error": result.failure()}
    return 200, result.unwrap()
