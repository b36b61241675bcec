"""Copying sessions between stores (SQLite to PostgreSQL and back), verified on arrival.

A session is copied whole: its row, its nodes in seq order, its ``main`` head, its commits
in stored order and its usage. The copy is then read back and compared with the source:
the JSON Lines export byte for byte, the commit ids in order, the head and the usage.
Copying again is a no-op, so an interrupted copy is finished by running it again.
"""

from __future__ import annotations

from collections.abc import Iterable

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
    """One session copied: its id, the nodes and commits it holds, the nodes added."""

    session_id: str
    nodes: int
    commits: int
    added: int


def _copy_one(source: Store, target: Store, info: SessionInfo) -> Result[Copied, StoreError]:
    sid = info.id
    loaded = source.load_session(sid)
    commits = source.commits_for(sid)
    if isinstance(loaded, Failure):
        return Failure(loaded.failure())
    if isinstance(commits, Failure):
        return Failure(commits.failure())
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
    return _verify(source, target, sid).map(
        lambda _: Copied(sid, len(session.graph), len(commits.unwrap()), added.unwrap())
    )


def _fingerprint(store: Store, sid: str) -> Result[tuple[object, ...], StoreError]:
    # What must match byte for byte: the export, the commit ids in order, the head.
    return (
        store.export_jsonl(sid)
        .bind(lambda text: store.commits_for(sid).map(lambda cs: (text, [c.id for c in cs])))
        .bind(lambda got: store.get_head(sid).map(lambda head: (*got, head)))
    )


def _verify(source: Store, target: Store, sid: str) -> Result[None, StoreError]:
    mine, theirs = _fingerprint(source, sid), _fingerprint(target, sid)
    if isinstance(mine, Failure):
        return Failure(mine.failure())
    if isinstance(theirs, Failure):
        return Failure(theirs.failure())
    names = ("JSON Lines export", "commit ids", "head")
    for what, one, other in zip(names, mine.unwrap(), theirs.unwrap(), strict=True):
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
    ...     copy_sessions(a, b).unwrap()
    [Copied(session_id='s', nodes=1, commits=0, added=1)]
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
