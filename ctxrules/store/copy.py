"""Copying sessions between stores (SQLite to PostgreSQL and back), verified on arrival.

A session is copied whole: its row, its nodes in seq order, its named heads, its commits
in stored order (through the target's own `put_commit`, so only objects it lacks are
written), its usage and its offloaded originals. The copy is then read back and compared
with the source: the JSON Lines export byte for byte, the commit ids in order (every item
of the copy rehashed), the heads, the usage and every blob. Copying again is a no-op, so
an interrupted copy is finished by running it again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs
from returns.result import Failure, Result, Success

from ctxrules.dag import thaw
from ctxrules.store.errors import StoreError, UnknownSession
from ctxrules.store.protocol import Store
from ctxrules.store.sessions import SessionInfo


@attrs.frozen
class CopyMismatch(StoreError):
    """The copy read back differs from the source (a store changed under the copy?)."""

    session_id: str
    what: str

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        return f"session {self.session_id!r}: the copy's {self.what} differs from the source"


@attrs.frozen
class Copied:
    """One session copied: its id, the nodes, commits and blobs it holds, the nodes added."""

    session_id: str
    nodes: int
    commits: int
    added: int
    blobs: int


def _move_heads(target: Store, sid: str, heads: Mapping[str, str]) -> Result[None, StoreError]:
    # ``main`` came with the session; the others are set as the source has them. A head
    # the target already points elsewhere is `HeadMoved`, as for ``main``: never overwritten.
    for name, node in heads.items():
        now = target.get_head(sid, name)
        if isinstance(now, Failure):
            return Failure(now.failure())
        if now.unwrap() != node:
            moved = target.move_head(sid, name, None, node)
            if isinstance(moved, Failure):
                return moved
    return Success(None)


def _put_blobs(target: Store, sid: str, blobs: Mapping[str, str]) -> Result[None, StoreError]:
    for handle, text in blobs.items():
        put = target.put_blob(sid, handle, text)
        if isinstance(put, Failure):
            return Failure(put.failure())
    return Success(None)


def _copy_one(source: Store, target: Store, info: SessionInfo) -> Result[Copied, StoreError]:
    sid = info.id
    loaded = source.load_session(sid)
    commits = source.commits_for(sid)
    heads, blobs = source.heads(sid), source.session_blobs(sid)
    for read in (loaded, commits, heads, blobs):
        if isinstance(read, Failure):
            return Failure(read.failure())
    session, usage = loaded.unwrap(), source.load_usage(sid)
    metadata = thaw(info.metadata)
    created = target.create_session(
        sid,
        created_at=info.created_at,
        title=info.title,
        metadata=metadata if isinstance(metadata, dict) else None,
    )
    if isinstance(created, Failure):
        return Failure(created.failure())
    added = target.save_session(session, usage=usage)
    if isinstance(added, Failure):
        return Failure(added.failure())
    # One by one, in the source's order: commits_for must list them in the same order.
    for commit in commits.unwrap():
        put = target.put_commit(commit)
        if isinstance(put, Failure):
            return Failure(put.failure())
    rest = _move_heads(target, sid, heads.unwrap()).bind(
        lambda _: _put_blobs(target, sid, blobs.unwrap())
    )
    return rest.bind(lambda _: _verify(source, target, sid)).map(
        lambda _: Copied(
            sid, len(session.graph), len(commits.unwrap()), added.unwrap(), len(blobs.unwrap())
        )
    )


#: What must match between the source and the copy, in the order it is compared.
_COMPARED = ("JSON Lines export", "commit ids", "heads", "offloaded originals")


def _fingerprint(store: Store, sid: str, *, check: bool) -> Result[tuple[object, ...], StoreError]:
    # ``check`` rehashes every item of every commit from its content (the copy's side).
    return (
        store.export_jsonl(sid)
        .bind(
            lambda text: store.commits_for(sid, check=check).map(
                lambda cs: (text, [c.id for c in cs])
            )
        )
        .bind(lambda got: store.heads(sid).map(lambda heads: (*got, heads)))
        .bind(lambda got: store.session_blobs(sid).map(lambda blobs: (*got, blobs)))
    )


def _verify(source: Store, target: Store, sid: str) -> Result[None, StoreError]:
    mine = _fingerprint(source, sid, check=False)
    theirs = _fingerprint(target, sid, check=True)
    if isinstance(mine, Failure):
        return Failure(mine.failure())
    if isinstance(theirs, Failure):
        return Failure(theirs.failure())
    for what, one, other in zip(_COMPARED, mine.unwrap(), theirs.unwrap(), strict=True):
        if one != other:
            return Failure(CopyMismatch(sid, what))
    if source.load_usage(sid) != target.load_usage(sid):
        return Failure(CopyMismatch(sid, "usage"))
    return Success(None)


def copy_sessions(
    source: Store, target: Store, session_ids: Iterable[str] | None = None
) -> Result[list[Copied], StoreError]:
    """Copy the sessions (default: all) from ``source`` to ``target`` and verify each copy.

    >>> from ctxrules.dag import Session
    >>> from ctxrules.store import open_store
    >>> with open_store("sqlite://").unwrap() as a, open_store("sqlite://").unwrap() as b:
    ...     _ = a.save_session(Session("s").send("user", "hi").unwrap()).unwrap()
    ...     _ = a.put_blob("s", "h:1", "the whole original").unwrap()
    ...     copy_sessions(a, b).unwrap()
    ...     b.get_blob("s", "h:1").unwrap()
    [Copied(session_id='s', nodes=1, commits=0, added=1, blobs=1)]
    'the whole original'
    """
    listed = source.list_sessions()
    if isinstance(listed, Failure):
        return Failure(listed.failure())
    infos = {info.id: info for info in listed.unwrap()}
    wanted = list(infos) if session_ids is None else list(session_ids)
    done: list[Copied] = []
    for sid in wanted:
        if sid not in infos:
            return Failure(UnknownSession(sid))
        copied = _copy_one(source, target, infos[sid])
        if isinstance(copied, Failure):
            return Failure(copied.failure())
        done.append(copied.unwrap())
    return Success(done)
