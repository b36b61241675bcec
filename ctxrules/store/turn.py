"""`TurnWrite`: everything one turn of a live session stores, written in one transaction.

The nodes appended since the last write (each in its final form, so a tool result that
arrived before the write is stored with its node), the completions of nodes stored while
running, the head moved by compare-and-set, the commits made, the usage and the reference
tracker's change. Either all of
it is stored or none of it: a crash never leaves a reply without its tool calls, nor a
node stored with the head not moved.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from returns.result import Failure, Result, Success

from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Status
from ctxrules.store import objects
from ctxrules.store.commits import parents_first
from ctxrules.store.errors import StoreError
from ctxrules.store.references import ReferencesWrite, put_references
from ctxrules.store.rows import Rows
from ctxrules.tokens.usage import UsageState


@attrs.frozen
class Completion:
    """A node stored while running that has its output now."""

    node_id: str
    output: object
    status: Status


@attrs.frozen
class TurnWrite:
    """One turn's writes to one session; ``head`` is ``(expected, new)`` or None."""

    session_id: str
    nodes: tuple[Call, ...] = ()
    completions: tuple[Completion, ...] = ()
    head: tuple[str | None, str] | None = None
    commits: tuple[ContextCommit, ...] = ()
    usage: UsageState | None = None
    head_name: str = "main"
    references: ReferencesWrite | None = None

    @property
    def empty(self) -> bool:
        """Whether there is nothing to write."""
        return not (
            self.nodes
            or self.completions
            or self.head
            or self.commits
            or self.usage
            or self.references
        )


@attrs.frozen
class TurnWritten:
    """What a turn wrote: the node seqs given, and the commit objects' rows and bytes."""

    seqs: tuple[int, ...] = ()
    object_rows: int = 0
    object_bytes: int = 0


@attrs.frozen
class TurnSteps:
    """A backend's writes, inside one of its transactions, that a turn is made of."""

    rows: Rows
    append_node: Callable[[str, Call], Result[int, StoreError]]
    complete_node: Callable[[str, str, object, Status], Result[None, StoreError]]
    move_head: Callable[[str, str, str | None, str], Result[None, StoreError]]
    put_usage: Callable[[str, UsageState], Result[None, StoreError]]


def _nodes(steps: TurnSteps, turn: TurnWrite) -> Result[tuple[int, ...], StoreError]:
    sid, seqs = turn.session_id, []
    for call in turn.nodes:
        appended = steps.append_node(sid, call)
        if isinstance(appended, Failure):
            return Failure(appended.failure())
        seqs.append(appended.unwrap())
    for done in turn.completions:
        completed = steps.complete_node(sid, done.node_id, done.output, done.status)
        if isinstance(completed, Failure):
            return Failure(completed.failure())
    if turn.head is not None:
        moved = steps.move_head(sid, turn.head_name, *turn.head)
        if isinstance(moved, Failure):
            return Failure(moved.failure())
    return Success(tuple(seqs))


def apply_turn(
    steps: TurnSteps, turn: TurnWrite, known: set[str], fresh: list[str]
) -> Result[TurnWritten, StoreError]:
    """Store a turn's nodes, completions, head, commits and usage, in the caller's transaction.

    The digests of the commit objects written go to ``fresh``, for the store's hint of
    what is stored once the transaction has committed.
    """
    stored = _nodes(steps, turn)
    if isinstance(stored, Failure):
        return Failure(stored.failure())
    rows = size = 0
    for commit in parents_first(turn.commits):
        put = objects.put_commit(steps.rows, commit, known)
        if isinstance(put, Failure):
            return Failure(put.failure())
        written = put.unwrap()
        fresh.extend(written.digests)
        rows, size = rows + written.rows, size + written.bytes
    if turn.usage is not None:
        used = steps.put_usage(turn.session_id, turn.usage)
        if isinstance(used, Failure):
            return Failure(used.failure())
    if turn.references is not None:
        kept = put_references(steps.rows, turn.session_id, turn.references)
        if isinstance(kept, Failure):
            return Failure(kept.failure())
    return Success(TurnWritten(stored.unwrap(), rows, size))
