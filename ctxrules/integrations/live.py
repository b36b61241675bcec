"""A ctxrules session kept in step with a framework's own message list, and saved to the store.

Frameworks hold the conversation as a flat list (LangGraph's ``messages``, the Agents SDK's
items). `LiveSession.sync` appends what is new in that list to the DAG; when the list no
longer starts with what was synced (the framework rewrote or popped history), the head
moves back to the last message both agree on and the rest is appended as a new branch:
the DAG keeps every version, nothing is overwritten.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from returns.result import Failure, Result, Success

from ctxrules.dag import DagError, Role, Session, Status
from ctxrules.dag.call_ids import PROVIDER_CALL_ID, CallIds
from ctxrules.dag.layered import LayeredIds, Outline
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.persist import Keeper, open_session
from ctxrules.importers.messages import Message
from ctxrules.store import StoreError
from ctxrules.store.protocol import Store

#: Node metadata key: the framework's key of the message a node holds.
KEY = "source_key"


def result_key(call_id: str) -> str:
    """The key of a tool result: a framework answers each tool call id once.

    >>> result_key("c1")
    'result:c1'
    """
    return f"result:{call_id}"


@attrs.frozen
class Entry:
    """One message of the framework's list: its stable ``key`` and its common shape.

    ``joins`` marks an assistant part (an Agents SDK function call) that belongs to the
    assistant turn just before it rather than starting a new node.
    """

    key: str
    message: Message
    joins: bool = False


@attrs.define
class LiveSession:
    """The session, the keys synced so far, the head after each, and the calls awaiting results.

    ``keeper`` writes it to the store (None: kept in memory only).
    """

    session: Session
    keeper: Keeper | None = None
    keys: list[str] = attrs.Factory(list)
    heads: list[str | None] = attrs.Factory(list)
    calls: dict[str, str] = attrs.Factory(dict)
    joinable: bool = False
    #: Every tool call id recorded: a reused one is recorded under a fresh id (`_record_id`).
    used: CallIds = attrs.Factory(CallIds)
    #: Per recorded id, the position in ``keys`` of the entry that recorded it, in that
    #: order: a rewind past it frees the id, as a session reopened on the kept branch never saw it.
    recorded_at: dict[str, int] = attrs.Factory(dict)

    @classmethod
    def open(
        cls,
        session_id: str,
        store: Store | None,
        engine: DefaultContextEngine | None = None,
        *,
        created_at: float = 0.0,
    ) -> Result[LiveSession, StoreError]:
        """The live session for ``session_id``: its stored nodes, or a new empty session.

        With a store, ``engine`` gets the session's stored state back (its last commit,
        usage and references), so the next request is the one the last process would have
        built; nodes are read when first touched, as `Context` resumes.
        """
        if store is None:
            return Success(cls(Session(session_id)))
        opened = open_session(
            store, session_id, engine or DefaultContextEngine(), created_at=created_at
        )
        if isinstance(opened, Failure):
            return Failure(opened.failure())
        keeper, session = opened.unwrap()
        live = cls(session, keeper)
        live.replay_keys()
        return Success(live)

    @property
    def store(self) -> Store | None:
        """The store the session is kept in, or None."""
        return self.keeper.store if self.keeper is not None else None

    def replay_keys(self) -> None:
        """Rebuild the synced keys from the nodes' metadata (after loading from the store).

        A stored session is walked over its nodes' outlines, read in one pass without their
        texts: opening a 100k-message session decoded every record before (6.5 s of CPU).
        """
        graph, order = self.session.graph, self.session.graph.order
        if (
            isinstance(order, LayeredIds)
            and order.outline is not None
            and len(order) == order.stored
        ):
            self._replay_outlines(order.outline())
            return
        for call in self.session.branch():
            tools = [graph.nodes[callee] for callee in graph.callees_of(call.id)]
            self._replay_turn(
                Outline(call.id, call.predecessor, call.caller, call.status.value, call.metadata),
                [Outline(t.id, t.predecessor, t.caller, t.status.value, t.metadata) for t in tools],
            )

    def _replay_outlines(self, outlines: Sequence[Outline]) -> None:
        by_id = {node.id: node for node in outlines}
        callees: dict[str, list[Outline]] = {}
        for node in outlines:
            if node.caller is not None:
                callees.setdefault(node.caller, []).append(node)
        chain, at = [], self.session.head
        while at is not None and at in by_id:
            node = by_id[at]
            chain.append(node)
            at = node.predecessor
        for node in reversed(chain):
            self._replay_turn(node, callees.get(node.id, []))

    def _replay_turn(self, call: Outline, tools: Sequence[Outline]) -> None:
        """One node of the branch and its tool calls: their keys, and the calls still waiting."""
        self._mark(call.metadata.get(KEY), call.id)
        turn, entry_of = len(self.keys) - 1, {}
        for tool in tools:
            key = tool.metadata.get(KEY)
            self._mark(key, call.id)
            # A call joined to the turn has an entry of its own; the others are the turn's.
            entry_of[tool.id] = len(self.keys) - 1 if isinstance(key, str) else turn
        for tool in tools:
            recorded = tool.metadata.get("tool_call_id")
            if not isinstance(recorded, str):
                continue
            self.used.add(recorded)
            self.recorded_at[recorded] = entry_of[tool.id]
            # The framework's list names the call by the id its model sent.
            given = tool.metadata.get(PROVIDER_CALL_ID, recorded)
            call_id = given if isinstance(given, str) else recorded
            if tool.status == Status.RUNNING.value:
                self.calls[call_id] = tool.id
            else:
                # Tool nodes are recorded running: one that is not got its result.
                self._mark(result_key(call_id), call.id)

    def _mark(self, key: object, head: str | None) -> None:
        if isinstance(key, str):
            self.keys.append(key)
            self.heads.append(head)

    def sync(self, entries: Sequence[Entry], now: float = 0.0) -> Result[Session, DagError]:
        """Append the entries not yet synced; a rewritten list starts a branch where it differs.

        ``now`` is the time the new nodes are stamped with (the rules age items by it).
        """
        return self.sync_after(0, entries, now)

    def sync_after(
        self, keep: int, entries: Sequence[Entry], now: float = 0.0
    ) -> Result[Session, DagError]:
        """`sync`, with the first ``keep`` entries synced left as they are and ``entries`` after them.

        The entries synced after those that match ``entries`` in order stay; from the first
        that differs the branch is rewound and the rest appended.
        """
        same = keep
        limit = min(keep + len(entries), len(self.keys))
        while same < limit and entries[same - keep].key == self.keys[same]:
            same += 1
        if same < len(self.keys):
            # A tool result or a joined call cannot be taken off its assistant node: the
            # branch restarts before that node and the kept part of its turn is added anew.
            while same > keep and self.heads[same - 1] == self.heads[same]:
                same -= 1
            rewound = self._rewind(same, now)
            if isinstance(rewound, Failure):
                return Failure(rewound.failure())
        return self.extend(entries[same - keep :], now)

    def extend(self, entries: Sequence[Entry], now: float = 0.0) -> Result[Session, DagError]:
        """Append the entries as new messages after everything synced so far."""
        for entry in entries:
            added = self._add(entry, now)
            if isinstance(added, Failure):
                return Failure(added.failure())
        return Success(self.session)

    def _rewind(self, keep: int, now: float) -> Result[None, DagError]:
        del self.keys[keep:], self.heads[keep:]
        self.calls.clear()
        # A call taken off the branch no longer holds its id: a popped tool output added
        # again answers its call under the id the framework's list shows.
        # Ids are recorded in the order of their entries, so those past ``keep`` are the
        # newest: popped from the end, a rewind costs the calls it frees, not every call.
        while self.recorded_at:
            freed, at = next(reversed(self.recorded_at.items()))
            if at < keep:
                break
            self.recorded_at.popitem()
            self.used.release(freed)
        self.joinable = False
        if keep:
            self.session = attrs.evolve(self.session, head=self.heads[keep - 1])
            return Success(None)
        # Back to nothing: a new root that renders to nothing marks the empty history, so
        # the stored head can move to it (the old branch stays in the DAG).
        empty = attrs.evolve(self.session, head=None).send(
            Role.SYSTEM, "", metadata={"restart": True}, created_at=now
        )
        if isinstance(empty, Failure):
            return Failure(empty.failure())
        self.session = empty.unwrap()
        self._appended(str(self.session.head))
        return Success(None)

    def _appended(self, node_id: str) -> None:
        if self.keeper is not None:
            self.keeper.append(node_id)

    def _add(self, entry: Entry, now: float) -> Result[None, DagError]:
        message = entry.message
        if message.role is None:
            return self._answer(entry, now)
        session = self.session
        head = session.head
        joins = entry.joins and self.joinable and head is not None
        if not joins:
            metadata = {**message.metadata, KEY: entry.key}
            sent = session.send(
                message.role, message.text, name=message.name, metadata=metadata, created_at=now
            )
            if isinstance(sent, Failure):
                return Failure(sent.failure())
            session = sent.unwrap()
            self._appended(str(session.head))
        caller = session.head
        for index, call in enumerate(message.tool_calls):
            call_id = call.call_id or f"{caller}.{index}"
            recorded_id = self._record_id(call_id)
            self.recorded_at[recorded_id] = len(self.keys)
            metadata = {**call.metadata, "tool_call_id": recorded_id}
            if recorded_id != call_id:
                metadata[PROVIDER_CALL_ID] = call_id
            if joins:
                metadata[KEY] = entry.key
            recorded = session.record_call(
                str(caller),
                call.name,
                call.arguments,
                metadata=metadata,
                status=Status.RUNNING,
                created_at=now,
            )
            if isinstance(recorded, Failure):
                return Failure(recorded.failure())
            session = recorded.unwrap()
            self.calls[call_id] = session.graph.order[-1]
            self._appended(self.calls[call_id])
        self.session = session
        self.joinable = message.role is Role.ASSISTANT
        self.keys.append(entry.key)
        self.heads.append(session.head)
        return Success(None)

    def _record_id(self, call_id: str) -> str:
        """The id a call is recorded under: ``call_id``, or a fresh one if an earlier call had it.

        A request pairs calls and results by id; two calls under one id would both be sent
        as text (`ctxrules.engine.call_ids`). The framework's list keeps the model's id,
        and its result is matched by that one (``calls``).
        """
        return self.used.record(call_id)

    def _answer(self, entry: Entry, now: float) -> Result[None, DagError]:
        message = entry.message
        node = self.calls.pop(message.result_for or "", None)
        if node is None:
            # A result for a call this session never saw: keep it as text the model reads.
            text = f"[tool result {message.result_for}] {message.text}"
            return self._add(Entry(entry.key, Message(text, Role.USER)), now)
        status = Status.ERROR if message.is_error else Status.DONE
        completed = self.session.complete(node, message.text, status)
        if isinstance(completed, Failure):
            return Failure(completed.failure())
        self.session = completed.unwrap()
        if self.keeper is not None:
            self.keeper.complete(node)
        self.joinable = False
        self.keys.append(result_key(message.result_for or ""))
        self.heads.append(self.session.head)
        return Success(None)

    def save(self) -> Result[None, StoreError]:
        """Store the nodes and completions since the last save and move the head (no store: no-op).

        Only what is new is written, in one transaction: a save costs the turn, not the
        history, and one that failed stored nothing and is simply retried.
        """
        if self.keeper is None or self.session.head is None:
            return Success(None)
        return self.keeper.flush(self.session)
