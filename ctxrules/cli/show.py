"""`ctxrules show STORE [SESSION]` and `ctxrules export`: look into a store, or convert a log."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from returns.result import Failure

from ctxrules.cli.listing import format_listing, session_line
from ctxrules.cli.terminal import printable
from ctxrules.commit import ContextCommit
from ctxrules.dag import Graph, ancestors, graph_to_jsonl
from ctxrules.importers import import_session
from ctxrules.store.errors import UnknownSession


def _open(path: str) -> Any:  # noqa: ANN401 - a Store, imported lazily
    from ctxrules.store import open_store, parse_store_url  # noqa: PLC0415 - the only I/O layer

    where = parse_store_url(path).value_or(None)
    if where is not None and where.backend == "sqlite" and not Path(where.target).is_file():
        return f"{path}: no such store"
    # Looking must not write: an empty file stays empty, a read-only folder is fine.
    opened = open_store(path, read_only=True)
    return opened.unwrap() if not isinstance(opened, Failure) else str(opened.failure())


def timeline(commits: list[ContextCommit], graph: Graph, head: str | None) -> list[ContextCommit]:
    """The commit of the head (or its nearest ancestor) and its first parents, newest first."""
    by_id = {c.id: c for c in commits}
    parents = {p for c in commits for p in c.parent_ids}
    heads = {c.head_node_id for c in commits}
    near = next((call.id for call in ancestors(graph, head) if call.id in heads), None)
    tips = [c for c in commits if c.head_node_id == near and c.id not in parents]
    chain: list[ContextCommit] = []
    current = tips[-1] if tips else None
    while current is not None and current not in chain:
        chain.append(current)
        current = by_id.get(current.parent_ids[0]) if current.parent_ids else None
    return chain


def _cut(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return printable(flat if len(flat) <= width else flat[: width - 1] + "…")


def format_timeline(chain: list[ContextCommit]) -> str:
    """Like ``git log`` of the context: each commit, then the items it added or changed."""
    lines: list[str] = []
    for position, commit in enumerate(chain):
        parent = chain[position + 1] if position + 1 < len(chain) else None
        states = Counter(item.state.value for item in commit.items)
        when = datetime.fromtimestamp(commit.created_at, UTC).isoformat(timespec="seconds")
        head = printable(str(commit.head_node_id))
        lines.append(f"commit {commit.id[:18]}  head {head}  {when}")
        lines.append(
            f"  {commit.total_tokens:,} tokens, {len(commit.items)} items: "
            + ", ".join(f"{n} {s}" for s, n in sorted(states.items()))
        )
        before = (
            {(i.source_node_id, i.attached_from): i for i in parent.items}
            if parent is not None
            else {}
        )
        for item in commit.items:
            old = before.get((item.source_node_id, item.attached_from))
            if old is not None and old == item:
                continue
            mark = "+" if old is None else "~"
            attached = (
                f" attached_from={printable(item.attached_from[:14])}" if item.attached_from else ""
            )
            reason = printable(item.reason)
            lines.append(
                f"  {mark} {item.state.value:<10} {item.tokens:>6}  {item.role.value:<9} {reason}{attached}  {_cut(item.rendered)}"
            )
    return "\n".join(lines)


def _missing(store: str, session: str) -> str:
    return f"no session {session!r} in {store}: `ctxrules show {store}` lists the sessions"


def _list(store: Any, path: str, limit: int, out: TextIO) -> int:  # noqa: ANN401 - SqliteStore
    listed = store.list_sessions()
    if isinstance(listed, Failure):
        sys.stderr.write(f"{path}: {listed.failure()}\n")
        return 2
    infos = listed.unwrap()
    shown = infos[-limit:] if limit > 0 else infos
    lines = []
    for info in shown:
        graph = store.load_graph(info.id)
        if isinstance(graph, Failure):
            sys.stderr.write(f"{path}: {graph.failure()}\n")
            return 2
        lines.append(session_line(info, graph.unwrap()))
    if not infos:
        out.write(f"{path} holds no sessions yet (`ctxrules replay` stores one)\n")
        return 0
    out.write(format_listing(lines, len(infos) - len(shown)) + "\n")
    return 0


def run_show(args: argparse.Namespace, out: TextIO) -> int:
    """List sessions, or print one session's commit timeline (newest ``--limit`` commits)."""
    store = _open(args.store)
    if isinstance(store, str):
        sys.stderr.write(store + "\n")
        return 2
    try:
        if args.session is None:
            return _list(store, args.store, args.limit, out)
        head = store.get_head(args.session)
        commits = store.commits_for(args.session)
        graph = store.load_graph(args.session)
        for result in (head, commits, graph):
            if isinstance(result, Failure):
                problem = result.failure()
                unknown = isinstance(problem, UnknownSession)
                sys.stderr.write(
                    (_missing(args.store, args.session) if unknown else f"{problem}") + "\n"
                )
                return 2
        chain = timeline(commits.unwrap(), graph.unwrap(), head.unwrap())
        shown = chain[: args.limit] if args.limit > 0 else chain
        out.write(format_timeline(shown) + "\n")
        if len(shown) < len(chain):
            out.write(
                f"({len(chain) - len(shown)} older commits not shown: --limit N shows more, 0 all)\n"
            )
        return 0
    finally:
        store.close()


def run_export(args: argparse.Namespace, out: TextIO) -> int:
    """A session as ctxrules JSON Lines: from a store (with --session) or from a recorded log."""
    if args.session is not None:
        store = _open(args.path)
        if isinstance(store, str):
            sys.stderr.write(store + "\n")
            return 2
        try:
            exported = store.export_jsonl(args.session)
        finally:
            store.close()
        if isinstance(exported, Failure):
            problem = exported.failure()
            unknown = isinstance(problem, UnknownSession)
            sys.stderr.write(
                (_missing(args.path, args.session) if unknown else f"{problem}") + "\n"
            )
            return 2
        out.write(exported.unwrap())
        return 0
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
