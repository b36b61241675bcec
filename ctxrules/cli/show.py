"""`ctxrules show STORE [SESSION]` and `ctxrules export`: look into a store, or convert a log."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

import attrs
from returns.result import Failure, Result, Success

from ctxrules.cli.listing import format_listing, session_line
from ctxrules.cli.stored_log import (
    missing_session,
    names_store,
    open_read_only,
    session_wanted,
)
from ctxrules.cli.terminal import printable
from ctxrules.cli.timeline import format_timeline, read_timeline
from ctxrules.dag import graph_to_jsonl
from ctxrules.importers import import_session
from ctxrules.inspect.delta import chunk_cache
from ctxrules.inspect.source import CommitSource, NodeSource
from ctxrules.store.errors import UnknownSession
from ctxrules.store.redact import shown_url

#: Ancestors of a moved head searched one by one for a commit before reading every commit.
NEAR_NODES = 2_000


def _near_commit(store: Any, source: CommitSource, session: str, head: str | None) -> str | None:  # noqa: ANN401 - a Store
    """The commit of ``head``'s nearest ancestor that has one, looked for node by node.

    None when none has one within `NEAR_NODES`, or the store cannot be asked by head.
    """
    nodes = NodeSource(store, session)
    node = head
    try:
        for _ in range(NEAR_NODES):
            if node is None:
                break
            found = source.for_head(session, node)
            if found is not None:
                return found
            call = nodes.get(node)
            node = call.predecessor if call is not None else None
    except LookupError:
        pass
    return None


@attrs.frozen
class Start:
    """Where a timeline starts: a commit id (None: no commit stored), and a note to print first."""

    commit: str | None
    note: str = ""


def _start(store: Any, source: CommitSource, session: str) -> Result[Start, Any]:  # noqa: ANN401 - a Store
    """The head's commit or its nearest ancestor's; else the newest stored commit, with a note."""
    head = store.get_head(session)
    if isinstance(head, Failure):
        return head
    last = source.last_id(session)
    if last is None:
        return Success(Start(None, f"session {printable(session)} has no stored commits yet"))
    found = source.get(last)
    if isinstance(found, Success) and found.unwrap().head_node_id == head.unwrap():
        return Success(Start(last))
    # The head moved since the last commit (a rewind, a retry): its nearest ancestor's.
    near = _near_commit(store, source, session, head.unwrap())
    if near is not None:
        return Success(Start(near))
    note = (
        f"(no commit is stored for the branch at the head {printable(str(head.unwrap()))} yet; "
        "the newest stored commit, on another branch, follows)"
    )
    return Success(Start(last, note))


def _list(store: Any, path: str, limit: int, out: TextIO) -> int:  # noqa: ANN401 - SqliteStore
    listed = store.list_sessions()
    if isinstance(listed, Failure):
        sys.stderr.write(f"{shown_url(path)}: {listed.failure()}\n")
        return 2
    infos = listed.unwrap()
    shown = infos[-limit:] if limit > 0 else infos
    lines = []
    for info in shown:
        try:
            lines.append(session_line(info, NodeSource(store, info.id)))
        except LookupError as error:
            sys.stderr.write(f"{shown_url(path)}: {error}\n")
            return 2
    if not infos:
        out.write(f"{shown_url(path)} holds no sessions yet (`ctxrules replay` stores one)\n")
        return 0
    out.write(format_listing(lines, len(infos) - len(shown)) + "\n")
    return 0


def run_show(args: argparse.Namespace, out: TextIO) -> int:
    """List sessions, or print one session's commit timeline (newest ``--limit`` commits)."""
    store = open_read_only(args.store)
    if isinstance(store, str):
        sys.stderr.write(store + "\n")
        return 2
    try:
        if args.session is None:
            return _list(store, args.store, args.limit, out)
        source = CommitSource(store)
        start = _start(store, source, args.session)
        if isinstance(start, Failure):
            return _session_failed(args.store, args.session, start.failure())
        begin = start.unwrap()
        if begin.note:
            out.write(begin.note + "\n")
        if begin.commit is None:
            return 0
        chunks = chunk_cache()[0]
        read = read_timeline(source, begin.commit, args.limit, chunks)
        if isinstance(read, Failure):
            sys.stderr.write(f"{read.failure()}\n")
            return 2
        out.write(format_timeline(read.unwrap(), chunks) + "\n")
        return 0
    finally:
        store.close()


def _session_failed(store: str, session: str, problem: object) -> int:
    """Say why a session could not be read (naming the stored ones if it is unknown); exit 2."""
    unknown = isinstance(problem, UnknownSession)
    sys.stderr.write((missing_session(store, session) if unknown else f"{problem}") + "\n")
    return 2


def run_export(args: argparse.Namespace, out: TextIO) -> int:
    """A session as ctxrules JSON Lines: from a store (with --session) or from a recorded log."""
    if args.session is not None:
        store = open_read_only(args.path)
        if isinstance(store, str):
            sys.stderr.write(store + "\n")
            return 2
        try:
            exported = store.export_jsonl(args.session)
        finally:
            store.close()
        if isinstance(exported, Failure):
            return _session_failed(args.path, args.session, exported.failure())
        out.write(exported.unwrap())
        return 0
    if names_store(args.path):
        sys.stderr.write(session_wanted(args.path) + "\n")
        return 2
    imported = import_session(args.path, format=args.format, skip_bad=args.skip_bad)
    if isinstance(imported, Failure):
        sys.stderr.write(f"{imported.failure()}\n")
        return 2
    result = imported.unwrap()
    for bad in result.stats.bad_records:
        sys.stderr.write(f"{args.path}: skipped {bad.unit} {bad.line}: {bad.reason}\n")
    out.write(graph_to_jsonl(result.session.graph))
    return 0


def register(commands: Any) -> None:  # noqa: ANN401 - argparse's subparsers type is private
    """Add the ``show`` and ``export`` subcommands."""
    show = commands.add_parser(
        "show", help="list a store's sessions, or one session's commit timeline"
    )
    show.add_argument("store", help="the store: a path, sqlite:///PATH or postgresql://...")
    show.add_argument("session", nargs="?", default=None, help="a session id")
    show.add_argument(
        "--limit",
        type=int,
        default=20,
        help="show the newest N sessions, or N commits of a session (default 20; 0 for all)",
    )
    show.set_defaults(run=run_show)
    export = commands.add_parser("export", help="write a session as ctxrules JSON Lines")
    export.add_argument("path", help="a recorded log, or a store with --session")
    export.add_argument(
        "--session", default=None, help="export this session from the store at PATH"
    )
    export.add_argument("--format", default=None, help="the log's format (default: detected)")
    export.add_argument("--skip-bad", action="store_true", help="skip bad records and report them")
    export.set_defaults(run=run_export)
