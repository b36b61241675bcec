"""Writes of many parts in one transaction, on either backend: a whole session, a turn, an append at the head."""

from __future__ import annotations

from collections.abc import Iterable

from returns.result import Failure, Result, Success

from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Session
from ctxrules.store import heads, nodes, objects, sessions
from ctxrules.store.commits import parents_first
from ctxrules.store.errors import HeadMoved, StoreError
from ctxrules.store.rows import Rows
from ctxrules.store.sessions import require_session
from ctxrules.store.turn import TurnWrite, TurnWritten, apply_turn
from ctxrules.store.tx import Tx
from ctxrules.tokens.usage import UsageState


def _put_commits(
    rows: Rows, batch: Iterable[ContextCommit], known: set[str], fresh: list[str]
) -> Result[None, StoreError]:
    for commit in parents_first(batch):
        put = objects.put_commit(rows, commit, known)
        if isinstance(put, Failure):
            return Failure(put.failure())
        fresh.extend(put.unwrap().digests)
    return Success(None)


def save_session(
    tx: Tx,
    session: Session,
    *,
    batch: Iterable[ContextCommit],
    usage: UsageState | None,
    head_name: str,
    expected_head: str | None,
    created_at: float,
    title: str,
    known: set[str],
    fresh: list[str],
) -> Result[int, StoreError]:
    """Store ``session`` (created if missing) with its head, commits and usage; nodes added.

    The head moves by compare-and-set from ``expected_head`` unless it already points at
    ``session.head``, so saving the same session again adds nothing.
    """
    session_id = session.session_id
    if require_session(tx.rows, session_id) is not None:
        created = sessions.create_session(tx.rows, session_id, created_at, title, None)
        if isinstance(created, Failure):
            return Failure(created.failure())
    refused = tx.hold(session_id)
    if refused is not None:
        return Failure(refused)
    added = nodes.append_graph(tx.nodes, session_id, session.graph)
    if isinstance(added, Failure):
        return added
    head = session.head
    if head is not None and heads.get_head(tx.rows, session_id, head_name) != head:
        moved = heads.move_head(tx.rows, session_id, head_name, expected_head, head)
        if isinstance(moved, Failure):
            return Failure(moved.failure())
    put = _put_commits(tx.rows, batch, known, fresh)
    if isinstance(put, Failure):
        return Failure(put.failure())
    if usage is not None:
        sessions.put_usage(tx.rows, session_id, usage)
    return added


def write_turn(
    tx: Tx, turn: TurnWrite, known: set[str], fresh: list[str]
) -> Result[TurnWritten, StoreError]:
    """Store a turn's nodes, completions, head, commits and usage, all or nothing."""
    return apply_turn(tx, turn, known, fresh)


def append_at_head(tx: Tx, session_id: str, call: Call, head_name: str) -> Result[int, StoreError]:
    """Append ``call`` and move the head from ``call.predecessor`` to it; `HeadMoved` if stale."""
    actual = heads.get_head(tx.rows, session_id, head_name)
    if actual == call.id and actual != call.predecessor:
        # This very call, made again after its acknowledgment was lost: its stored seq.
        return nodes.append_node(tx.nodes, session_id, call)
    if actual != call.predecessor:
        return Failure(HeadMoved(session_id, head_name, call.predecessor, actual))
    return nodes.append_node(tx.nodes, session_id, call).bind(
        lambda seq: heads.move_head(tx.rows, session_id, head_name, call.predecessor, call.id).map(
            lambda _: seq
        )
    )
