"""Keeping a live session in a store as it happens, and picking it up in another process.

Nodes are stored when they are appended, a tool result when it arrives, and after each
prepare the new commits, the head and the usage (with the compaction hold). Reopening
rebuilds the engine's state from them, so the next request is the one the old process
would have sent.
"""

from __future__ import annotations

import attrs
from pyrsistent import PMap, pmap
from returns.result import Failure, Result, Success

from ctxrules.commit import ContextCommit
from ctxrules.compaction import Hold
from ctxrules.compaction.occupancy import Measurement
from ctxrules.dag import Call, Session, branch
from ctxrules.engine.default import DefaultContextEngine
from ctxrules.engine.turn import SessionState
from ctxrules.generation.generate import item_for
from ctxrules.rules import ReferenceTracker
from ctxrules.store.commits import parents_first
from ctxrules.store.errors import StoreError
from ctxrules.store.protocol import Store


@attrs.define
class Keeper:
    """Writes one session's changes to the store as they happen."""

    store: Store
    session_id: str
    saved_commits: set[str] = attrs.Factory(set)
    head: str | None = None

    def append(self, call: Call, head: str | None) -> Result[None, StoreError]:
        """Store a node just appended to the session, and the session's head."""
        appended = self.store.append_node(self.session_id, call)
        if isinstance(appended, Failure):
            return Failure(appended.failure())
        if head is None or head == self.head:
            return Success(None)
        moved = self.store.move_head(self.session_id, "main", self.head, head)
        self.head = head if isinstance(moved, Success) else self.head
        return moved

    def complete(self, node_id: str, output: object, status: str) -> Result[None, StoreError]:
        """Store a running node's output (a tool result)."""
        return self.store.complete_node(self.session_id, node_id, output, status)

    def prepared(self, state: SessionState, head: str) -> Result[None, StoreError]:
        """Store the commits made for ``head`` since the last save, and the usage with its hold."""
        latest = state.commits.get(head)
        fresh: list[ContextCommit] = []
        pending = [latest] if latest is not None else []
        while pending:
            commit = pending.pop()
            if commit.id in self.saved_commits or commit in fresh:
                continue
            fresh.append(commit)
            pending.extend(state.by_id[p] for p in commit.parent_ids if p in state.by_id)
        for commit in parents_first(fresh):
            put = self.store.put_commit(commit)
            if isinstance(put, Failure):
                return put
            self.saved_commits.add(commit.id)
        hold = state.hold.until if state.hold is not None else None
        return self.store.put_usage(self.session_id, attrs.evolve(state.usage, hold_until=hold))


def open_session(
    store: Store, session_id: str, engine: DefaultContextEngine, *, created_at: float
) -> Result[tuple[Keeper, Session], StoreError]:
    """The stored session (its engine state restored) or a new one, and its keeper."""
    listed = store.list_sessions()
    if isinstance(listed, Failure):
        return Failure(listed.failure())
    if session_id not in {info.id for info in listed.unwrap()}:
        created = store.create_session(session_id, created_at=created_at)
        return created.map(lambda _: (Keeper(store, session_id), Session(session_id)))
    loaded = store.load_session(session_id)
    commits = store.commits_for(session_id)
    head = store.get_head(session_id)
    for result in (loaded, commits, head):
        if isinstance(result, Failure):
            return Failure(result.failure())
    session = loaded.unwrap()
    stored = commits.unwrap()
    engine.states[session_id] = restored_state(session, stored, store.load_usage(session_id))
    keeper = Keeper(store, session_id, {c.id for c in stored}, head.unwrap())
    return Success((keeper, session))


def restored_state(session: Session, commits: list[ContextCommit], usage: object) -> SessionState:
    """The engine's state of a session rebuilt from its stored commits and usage.

    The reference map is read again from the branch up to the last prepared head, which
    is what the engine had observed turn by turn.
    """
    by_id = pmap({c.id: c for c in commits})
    by_head: PMap[str, ContextCommit] = pmap()
    for commit in commits:  # stored parents first: a compacted commit replaces its head's
        if commit.head_node_id is not None:
            by_head = by_head.set(commit.head_node_id, commit)
    last = commits[-1].head_node_id if commits else None
    observed = branch(session.graph, last) if last is not None else ()
    references = ReferenceTracker().observe(item_for(call, 0) for call in observed)
    state = SessionState(commits=by_head, by_id=by_id, references=references)
    if not isinstance(usage, type(state.usage)):
        return attrs.evolve(state, observed_head=last, head=last)
    hold = Hold(usage.hold_until) if usage.hold_until is not None else None
    measured = Measurement(
        last, usage.compaction_count, usage.last_prompt_tokens + usage.last_cache_read_tokens
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
