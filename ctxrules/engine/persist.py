"""Keeping a live session in a store as it happens, and picking it up in another process.

What a turn adds (its nodes, tool results, head, commits and usage with the compaction
hold) is stored in one transaction at each request. Reopening reads the last commit and
the usage back instead of regenerating, so the next request is the one the old process
would have sent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs
from immutables import Map
from returns.result import Failure, Result, Success

from ctxrules.commit import ContextCommit
from ctxrules.compaction import Hold
from ctxrules.compaction.occupancy import Measurement
from ctxrules.dag import Session, branch
from ctxrules.engine.default import DefaultContextEngine
from ctxrules.engine.turn import SessionState
from ctxrules.generation.generate import item_for
from ctxrules.rules import ReferenceTracker
from ctxrules.store.errors import StoreError
from ctxrules.store.protocol import Store
from ctxrules.store.references import ReferencesWrite
from ctxrules.store.turn import Completion, TurnWrite, TurnWritten
from ctxrules.tokens.usage import UsageState


@attrs.define
class Keeper:
    """Writes one session's changes to the store: each `flush` one transaction.

    `Context` flushes once per call that changed the session: a message with its tool
    calls and the head move, a response with the usage, a tool result, a request with its
    commits. A crash leaves the store at the last call that returned, never half of one.
    """

    store: Store
    session_id: str
    saved_commits: set[str] = attrs.Factory(set)
    head: str | None = None
    #: Nodes appended since the last flush, in order (stored in their form at the flush).
    pending: list[str] = attrs.Factory(list)
    #: Nodes stored while running whose result came since the last flush.
    completed: list[str] = attrs.Factory(list)
    #: What the last flush wrote (rows and bytes of commit objects), for the tests.
    last_written: TurnWritten | None = None
    saved_usage: UsageState | None = None
    #: The reference tracker last kept, so a turn writes only what its observation changed.
    saved_references: ReferenceTracker | None = None
    #: Whether a flush since the last durable one committed without waiting for the disk.
    unsynced: bool = False

    def append(self, node_id: str) -> None:
        """Note a node just appended to the session; stored at the next flush."""
        self.pending.append(node_id)

    def complete(self, node_id: str) -> None:
        """Note a tool result; a node not stored yet is stored with it at the next flush."""
        if node_id not in self.pending and node_id not in self.completed:
            self.completed.append(node_id)

    def flush(
        self,
        session: Session,
        state: SessionState | None = None,
        head: str | None = None,
        *,
        durable: bool = True,
    ) -> Result[None, StoreError]:
        """Store what happened since the last flush, with the commits made for ``head``.

        ``durable=False`` commits without waiting for the disk; a durable flush makes every
        flush before it durable too (it writes the usage again if it has nothing else).
        """
        graph = session.graph
        completions = tuple(
            Completion(i, graph.nodes[i].output, graph.nodes[i].status) for i in self.completed
        )
        moved = (self.head, session.head) if session.head not in (None, self.head) else None
        fresh = self._fresh(state, head) if state is not None and head is not None else []
        usage = current = references = None
        if state is not None:
            hold = state.hold.until if state.hold is not None else None
            current = state.usage
            if current.hold_until != hold:
                current = attrs.evolve(current, hold_until=hold)
            usage = None if current == self.saved_usage else current
            if state.observed_head is not None:
                references = ReferencesWrite.of(
                    state.references, state.observed_head, self.saved_references
                )
        turn = TurnWrite(
            self.session_id,
            nodes=tuple(graph.nodes[i] for i in self.pending),
            completions=completions,
            head=moved,
            commits=tuple(fresh),
            usage=usage,
            references=references,
            durable=durable,
        )
        if turn.empty and durable and self.unsynced and current is not None:
            # Nothing new, but writes that did not wait: a commit that waits syncs them.
            turn = attrs.evolve(turn, usage=current)
        if turn.empty:
            return Success(None)
        written = self.store.write_turn(turn)
        if isinstance(written, Failure):
            return Failure(written.failure())
        self.last_written = written.unwrap()
        self.pending, self.completed = [], []
        self.head = session.head
        self.saved_commits.update(c.id for c in fresh)
        self.saved_usage = usage or self.saved_usage
        self.unsynced = not durable
        if state is not None and references is not None:
            self.saved_references = state.references
        return Success(None)

    def _fresh(self, state: SessionState, head: str) -> list[ContextCommit]:
        latest = state.commits.get(head)
        fresh: list[ContextCommit] = []
        pending = [latest] if latest is not None else []
        while pending:
            commit = pending.pop()
            if commit.id in self.saved_commits or commit in fresh:
                continue
            fresh.append(commit)
            pending.extend(state.by_id[p] for p in commit.parent_ids if p in state.by_id)
        return fresh


def open_session(
    store: Store,
    session_id: str,
    engine: DefaultContextEngine,
    *,
    created_at: float,
    metadata: Callable[[], Mapping[str, object]] | None = None,
) -> Result[tuple[Keeper, Session], StoreError]:
    """The stored session (its engine state restored) or a new one, and its keeper.

    ``metadata`` is asked for only when the session is new: it may read files and callbacks.

    Reads the head, the last stored commit's header and tree, the usage and the kept
    reference tracker: the graph's nodes and the commit's chunks are read when first
    touched (`Store.resume_session`, ``last_commit(lazy=True)``), so opening a long session
    costs what its next requests touch, not its history.
    """
    listed = store.list_sessions()
    if isinstance(listed, Failure):
        return Failure(listed.failure())
    if session_id not in {info.id for info in listed.unwrap()}:
        made = metadata() if metadata is not None else None
        created = store.create_session(session_id, created_at=created_at, metadata=made)
        return created.map(lambda _: (Keeper(store, session_id), Session(session_id)))
    loaded = store.resume_session(session_id)
    last = store.last_commit(session_id, lazy=True)
    for result in (loaded, last):
        if isinstance(result, Failure):
            return Failure(result.failure())
    session = loaded.unwrap()
    commit = last.unwrap()
    stored = [commit] if commit is not None else []
    kept = store.load_references(session_id)
    state = restored_state(session, stored, store.load_usage(session_id), kept)
    engine.states[session_id] = state
    keeper = Keeper(store, session_id, {c.id for c in stored}, session.head)
    if kept is not None and kept[1] is state.references:
        keeper.saved_references = state.references
    return Success((keeper, session))


def restored_state(
    session: Session,
    commits: list[ContextCommit],
    usage: object,
    kept: tuple[str, ReferenceTracker] | None = None,
) -> SessionState:
    """The engine's state of a session rebuilt from its stored commits, usage and tracker.

    The reference map is the one kept with the session when it was observed up to the
    last prepared head; else (a store written before it was kept) it is read again from
    the branch up to that head, which is what the engine had observed turn by turn.
    """
    by_id = Map({c.id: c for c in commits})
    # Stored parents first: a compacted commit replaces its head's.
    by_head = Map({c.head_node_id: c for c in commits if c.head_node_id is not None})
    last = commits[-1].head_node_id if commits else None
    if kept is not None and kept[0] == last:
        references = kept[1]
    else:
        observed = branch(session.graph, last) if last is not None else ()
        references = ReferenceTracker().observe(item_for(call, 0) for call in observed)
    state = SessionState(commits=by_head, by_id=by_id, references=references)
    if not isinstance(usage, type(state.usage)):
        return attrs.evolve(state, observed_head=last, head=last)
    hold = Hold(usage.hold_until) if usage.hold_until is not None else None
    # The measurement is of the request it answered; a store written before the head was
    # kept with the usage can only guess the last commit's.
    measured_head = usage.measured_head if usage.measured_head is not None else last
    measured = Measurement(
        measured_head,
        usage.compaction_count,
        usage.last_prompt_tokens + usage.last_cache_read_tokens,
    )
    return attrs.evolve(
        state,
        usage=usage,
        hold=hold,
        generation=usage.compaction_count,
        measurement=measured if usage.turn_count else None,
        observed_head=last,
        head=last,
    )
