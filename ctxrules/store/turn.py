"""`TurnWrite`: everything one turn of a live session stores, written in one transaction.

The nodes appended since the last write (each in its final form, so a tool result that
arrived before the write is stored with its node), the completions of nodes stored while
running, the head moved by compare-and-set, the commits made, the usage and the reference
tracker's change. Either all of
it is stored or none of it: a crash never leaves a reply without its tool calls, nor a
node stored with the head not moved.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import attrs
from returns.result import Failure, Result, Success

from ctxrules.canonical import canonical_json
from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Status
from ctxrules.store import objects
from ctxrules.store.commits import parents_first
from ctxrules.store.errors import DagRefused, NodeConflict, StoreError, UnknownSession
from ctxrules.store.heads import SELECT_HEAD, bad_name, head_refused, move_head, set_head
from ctxrules.store.nodes import (
    NEXT_SEQ,
    StoredNode,
    append_node,
    complete_node,
    completion,
    edge_error,
    edge_targets,
    present_query,
    same_node,
)
from ctxrules.store.references import ReferencesWrite, put_references
from ctxrules.store.rows import Query, in_batches, placeholders
from ctxrules.store.sessions import put_usage
from ctxrules.store.tx import HOLD_SQLITE, Tx
from ctxrules.tokens.usage import UsageState


@attrs.frozen
class Completion:
    """A node stored while running that has its output now."""

    node_id: str
    output: object
    status: Status


@attrs.frozen
class TurnWrite:
    """One turn's writes to one session; ``head`` is ``(expected, new)`` or None.

    ``durable=False`` lets the store commit it without waiting for the disk: it survives
    the process being killed, and power loss once a later durable write has committed.
    """

    session_id: str
    nodes: tuple[Call, ...] = ()
    completions: tuple[Completion, ...] = ()
    head: tuple[str | None, str] | None = None
    commits: tuple[ContextCommit, ...] = ()
    usage: UsageState | None = None
    head_name: str = "main"
    references: ReferencesWrite | None = None
    durable: bool = True

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


#: Nodes planned from one batch of reads: a bigger turn (a bulk load) goes in parts.
PART = 100


def apply_turn(
    tx: Tx, turn: TurnWrite, known: set[str], fresh: list[str]
) -> Result[TurnWritten, StoreError]:
    """Store a turn's nodes, completions, head, commits and usage, in the caller's transaction.

    Everything the writes are based on is read in one batch, the session held first
    (`Rows.reads`: one round trip on PostgreSQL); then the checks `append_node`,
    `complete_node`, `move_head` and `put_commit` make are made on what was read, and the
    writes follow. A turn of more than `PART` nodes is planned in parts, each part's reads
    made after the writes before it. The digests of the commit objects written go to
    ``fresh``, for the store's hint of what is stored once the transaction has committed.
    """
    seqs: list[int] = []
    rows = size = 0
    for part in _parts(turn):
        plan = _Reads.of(part)
        if plan is None:
            done = _one_by_one(tx, part, known, fresh)
        else:
            read = plan.read(tx)
            if isinstance(read, Failure):
                return Failure(read.failure())
            done = _write(tx, part, plan, read.unwrap(), known=known, fresh=fresh)
        if isinstance(done, Failure):
            return done
        written = done.unwrap()
        seqs += written.seqs
        rows, size = rows + written.object_rows, size + written.object_bytes
    return Success(TurnWritten(tuple(seqs), rows, size))


def _parts(turn: TurnWrite) -> list[TurnWrite]:
    """``turn`` as parts planned one after the other: nodes by `PART`, the rest with the last.

    A completion of a node the turn adds is planned after every node is written.
    """
    new = {c.id for c in turn.nodes}
    apart = any(d.node_id in new for d in turn.completions)
    if len(turn.nodes) <= PART and not apart:
        return [turn]
    groups = [turn.nodes[n : n + PART] for n in range(0, len(turn.nodes), PART)]
    if apart or not groups:
        groups.append(())
    sid = turn.session_id
    parts = [TurnWrite(sid, nodes=group) for group in groups[:-1]]
    return [*parts, attrs.evolve(turn, nodes=groups[-1])]


def _write(
    tx: Tx, turn: TurnWrite, plan: _Reads, found: _Found, *, known: set[str], fresh: list[str]
) -> Result[TurnWritten, StoreError]:
    """The part's writes, checked against what was read for it."""
    stored = _write_nodes(tx, turn, found)
    if isinstance(stored, Failure):
        return Failure(stored.failure())
    rows = size = 0
    seq = found.commit_seq
    for commit in plan.commits:
        if commit.id in found.commits:
            continue
        written = objects.write_commit(tx.rows, commit, seq, known)
        seq += 1
        fresh.extend(written.digests)
        rows, size = rows + written.rows, size + written.bytes
    _write_state(tx, turn)
    return Success(TurnWritten(stored.unwrap(), rows, size))


@attrs.frozen
class _Found:
    """What a turn's writes are based on, read under the session's hold."""

    stored: dict[str, StoredNode]
    present: set[str]
    seq: int
    head: str | None
    commits: set[str]
    commit_seq: int


@attrs.frozen
class _Reads:
    """The one batch of reads a turn (or a part of one) is planned from."""

    session_id: str
    new: tuple[str, ...]
    done: tuple[str, ...]
    targets: tuple[str, ...]
    commits: tuple[ContextCommit, ...]
    head_name: str

    @classmethod
    def of(cls, turn: TurnWrite) -> _Reads | None:
        """The reads of ``turn``, or None when it names a node twice (stored one by one)."""
        new = tuple(c.id for c in turn.nodes)
        done = tuple(d.node_id for d in turn.completions)
        ids = {*new, *done}
        if len(ids) != len(new) + len(done):
            return None  # each write must see the one before it
        targets = {t for c in turn.nodes for t in edge_targets(c)}
        if turn.head is not None:
            targets.add(turn.head[1])
        targets -= set(new)
        commits = tuple(parents_first(turn.commits)) if turn.commits else ()
        return cls(turn.session_id, new, done, tuple(sorted(targets)), commits, turn.head_name)

    def read(self, tx: Tx) -> Result[_Found, StoreError]:
        """Hold the session and read, in one batch, what the turn's writes are based on.

        The session's row, next seq, head and next commit seq are one statement of scalar
        reads (`state_query`), which also counts how many of the new nodes, of the edge
        targets and of the commits are stored: the rows themselves are read (a second
        batch) only when a count says the writes need them, as a retried or refused write
        does. PostgreSQL's hold, which locks the row, goes alone before the statement, so
        the reads after it see every write the lock waited for.
        """
        sid = self.session_id
        commit_ids = [c.id for c in self.commits]
        apart = tx.held != HOLD_SQLITE
        counted = max(len(self.new), len(self.targets), len(commit_ids)) <= BATCH
        state = state_query(
            sid,
            self.head_name,
            held=None if apart else tx.held,
            seq=bool(self.new),
            commit_seq=bool(commit_ids),
            counts=(self.new, self.targets, commit_ids) if counted else None,
        )
        first: list[list[Query]] = [
            [(tx.held, (sid,))] if apart else [],
            [state],
            [tx.nodes.stored_query(sid, b) for b in in_batches(self.done)],
        ]
        answers = iter(tx.rows.reads([q for group in first for q in group]))
        held_rows, state_rows, stored_rows = (
            [row for _ in group for row in next(answers)] for group in first
        )
        held, seq, head, commit_seq, *counts = state_rows[0]
        if (held_rows if apart else held) in (None, []):
            return Failure(UnknownSession(sid))
        stored, present, committed = counts if counted else (None, None, None)
        then: list[list[Query]] = [
            [tx.nodes.stored_query(sid, b) for b in in_batches(self.new)] if stored != 0 else [],
            [present_query(sid, b) for b in in_batches(self.targets)]
            if present != len(self.targets)
            else [],
            [_commits_query(b) for b in in_batches(commit_ids)] if committed != 0 else [],
        ]
        wanted = [q for group in then for q in group]
        answers = iter(tx.rows.reads(wanted) if wanted else [])
        more, present_rows, commit_rows = ([row for _ in g for row in next(answers)] for g in then)
        found = dict(tx.nodes.stored_row(row) for row in (*stored_rows, *more))
        # Every target is stored when the count says so: none had to be read.
        present_ids = set(self.targets) if present == len(self.targets) else set()
        return Success(
            _Found(
                found,
                present_ids | {str(row[0]) for row in present_rows} | set(found),
                int(seq) if seq is not None else 0,
                str(head) if head is not None else None,
                {str(row[0]) for row in commit_rows},
                int(commit_seq) if commit_seq is not None else 0,
            )
        )


#: The most ids `state_query` counts in a list of its own (a batch of `in_batches`).
BATCH = 500


def state_query(
    session_id: str,
    head_name: str,
    *,
    held: str | None,
    seq: bool,
    commit_seq: bool,
    counts: tuple[Sequence[str], Sequence[str], Sequence[str]] | None = None,
) -> Query:
    """One statement of a turn's scalar reads: the held session's row, next seq, head, next commit seq.

    A read not wanted (or the hold, when it goes apart) is ``NULL``. With ``counts`` (new
    node ids, edge targets, commit ids: at most `BATCH` each) three more columns say how
    many of each are stored.
    """
    params: list[object] = [session_id] if held is not None else []
    if seq:
        params.append(session_id)
    params += (session_id, head_name)
    if commit_seq:
        params.append(session_id)
    sizes = None
    if counts is not None:
        new, targets, commit_ids = counts
        sizes = (len(new), len(targets), len(commit_ids))
        params += (
            *((session_id, *new) if new else ()),
            *((session_id, *targets) if targets else ()),
        )
        params += tuple(commit_ids)
    return _state_sql(held, seq=seq, commit_seq=commit_seq, sizes=sizes), tuple(params)


@functools.lru_cache(maxsize=256)
def _state_sql(
    held: str | None, *, seq: bool, commit_seq: bool, sizes: tuple[int, int, int] | None
) -> str:
    """The SQL of `state_query` (a few shapes, each built once)."""
    commits = objects.NEXT_COMMIT_SEQ if commit_seq else None
    wanted = [held, NEXT_SEQ if seq else None, SELECT_HEAD, commits]
    if sizes is not None:
        nodes = "SELECT count(*) FROM nodes WHERE session_id = ? AND id IN ({})"
        commit_rows = "SELECT count(*) FROM commits WHERE id IN ({})"
        # An empty list is no statement (PostgreSQL has no empty IN list): nothing stored.
        wanted += [
            sql.format(placeholders(size)) if size else "0"
            for sql, size in zip((nodes, nodes, commit_rows), sizes, strict=True)
        ]
    return "SELECT " + ", ".join(f"({sql})" if sql is not None else "NULL" for sql in wanted)


def _commits_query(ids: Sequence[str]) -> Query:
    return f"SELECT id FROM commits WHERE id IN ({placeholders(len(ids))})", tuple(ids)  # noqa: S608 - only placeholders


def _write_nodes(tx: Tx, turn: TurnWrite, found: _Found) -> Result[tuple[int, ...], StoreError]:
    """The checks of `append_node`, `complete_node` and `move_head` on what was read; the writes."""
    sid, seq, seqs = turn.session_id, found.seq, []
    present = set(found.present)
    stored_all = True
    for call in turn.nodes:
        stored = found.stored.get(call.id)
        if stored is not None:
            if not same_node(stored, call):
                return Failure(NodeConflict(sid, call.id))
            seqs.append(stored.seq)
            continue
        stored_all = False
        error = edge_error(call, set(edge_targets(call)) - present)
        if error is not None:
            return Failure(DagRefused(sid, error))
        tx.nodes.add(sid, call, seq)
        present.add(call.id)
        seqs.append(seq)
        seq += 1
    for done in turn.completions:
        stored = found.stored.get(done.node_id)
        if stored is not None and _completed_so(stored, sid, done):
            continue
        stored_all = False
        completed = completion(stored, sid, done.node_id, done.output, done.status)
        if isinstance(completed, Failure):
            return Failure(completed.failure())
        tx.nodes.complete(sid, done.node_id, completed.unwrap())
    if turn.head is not None:
        expected, new = turn.head
        # A turn stored whole with the head at its new node is this very turn, written again
        # after its acknowledgment was lost (a connection dropped as the server committed).
        retried = stored_all and found.head == new and bool(turn.nodes or turn.completions)
        refused = bad_name(turn.head_name) or head_refused(
            sid,
            turn.head_name,
            found.head if retried else expected,
            found.head,
            new=new,
            stored=new in present,
        )
        if refused is not None:
            return Failure(refused)
        set_head(tx.rows, sid, turn.head_name, new)
    return Success(tuple(seqs))


def _completed_so(stored: StoredNode, session_id: str, done: Completion) -> bool:
    """Whether ``stored`` is already completed exactly as ``done`` would complete it (a retry)."""
    if stored.record.get("status") == Status.RUNNING.value:
        return False
    running = StoredNode({**stored.record, "status": Status.RUNNING.value}, stored.seq)
    again = completion(running, session_id, done.node_id, done.output, done.status)
    return isinstance(again, Success) and canonical_json(again.unwrap().record) == canonical_json(
        stored.record
    )


def _write_state(tx: Tx, turn: TurnWrite) -> None:
    """The usage and the reference tracker's change: state replaced, nothing to check."""
    if turn.usage is not None:
        put_usage(tx.rows, turn.session_id, turn.usage)
    if turn.references is not None:
        put_references(tx.rows, turn.session_id, turn.references)


def _one_by_one(
    tx: Tx, turn: TurnWrite, known: set[str], fresh: list[str]
) -> Result[TurnWritten, StoreError]:
    """A turn stored a node at a time through `append_node` and its siblings (a bulk load)."""
    refused = tx.hold(turn.session_id)
    if refused is not None:
        return Failure(refused)
    sid, seqs = turn.session_id, []
    for call in turn.nodes:
        appended = append_node(tx.nodes, sid, call)
        if isinstance(appended, Failure):
            return Failure(appended.failure())
        seqs.append(appended.unwrap())
    for done in turn.completions:
        completed = complete_node(tx.nodes, sid, done.node_id, done.output, done.status)
        if isinstance(completed, Failure):
            return Failure(completed.failure())
    if turn.head is not None:
        moved = move_head(tx.rows, sid, turn.head_name, *turn.head)
        if isinstance(moved, Failure):
            return Failure(moved.failure())
    rows = size = 0
    for commit in parents_first(turn.commits):
        put = objects.put_commit(tx.rows, commit, known)
        if isinstance(put, Failure):
            return Failure(put.failure())
        written = put.unwrap()
        fresh.extend(written.digests)
        rows, size = rows + written.rows, size + written.bytes
    _write_state(tx, turn)
    return Success(TurnWritten(tuple(seqs), rows, size))
