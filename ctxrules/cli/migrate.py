"""`ctxrules migrate SRC DST`: copy sessions between stores (SQLite and PostgreSQL), verified.

Each session arrives whole: nodes, heads, commits (as shared objects), usage and its
offloaded originals; see `ctxrules.store.copy`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from returns.result import Failure

from ctxrules.cli.stored_log import missing_session, open_read_only
from ctxrules.store.protocol import Store
from ctxrules.store.redact import shown_url


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Copy every session (or those named) and verify each copy; 0 copied, 2 on any failure."""
    from ctxrules.store import open_store  # noqa: PLC0415 - the store is the only I/O layer
    from ctxrules.store.copy import copy_sessions  # noqa: PLC0415 - see above

    if args.source == args.target:
        sys.stderr.write(
            f"migrate: source and target are the same store: {shown_url(args.source)}\n"
        )
        return 2
    # The source is only read: a file that is no store stays as it was, never made one.
    source = open_read_only(args.source)
    if isinstance(source, str):
        sys.stderr.write(source + "\n")
        return 2
    with source as src:
        # What the source lacks is said before the target is made.
        problem = _missing(src, args.source, args.session)
        if problem is not None:
            sys.stderr.write(problem + "\n")
            return 2
        target = open_store(args.target)
        if isinstance(target, Failure):
            sys.stderr.write(f"{target.failure()}\n")
            return 2
        with target.unwrap() as dst:
            copied = copy_sessions(src, dst, args.session or None)
    if isinstance(copied, Failure):
        sys.stderr.write(f"migrate: {copied.failure()}\n")
        return 2
    done = copied.unwrap()
    out.writelines(
        f"{one.session_id}: {one.nodes} nodes ({one.added} new), {one.commits} commits, "
        f"{one.blobs} offloaded originals, verified\n"
        for one in done
    )
    out.write(f"migrated {len(done)} session{'' if len(done) == 1 else 's'}\n")
    return 0


def _missing(source: Store, path: str, sessions: list[str]) -> str | None:
    """Why the sessions named cannot be copied from ``source`` (one it lacks, or its listing failed), or None."""
    listed = source.list_sessions()
    if isinstance(listed, Failure):
        return f"{shown_url(path)}: {listed.failure()}"
    held = {info.id for info in listed.unwrap()}
    absent = next((session for session in sessions if session not in held), None)
    return missing_session(path, absent) if absent is not None else None


def register(commands: Any) -> None:  # noqa: ANN401 - argparse's subparsers type is private
    """Add the ``migrate`` subcommand."""
    parser = commands.add_parser(
        "migrate", help="copy sessions from one store to another (SQLite <-> PostgreSQL)"
    )
    parser.add_argument(
        "source", help="the store to read (never written): a path, sqlite:///PATH or postgresql://"
    )
    parser.add_argument("target", help="the store to write (created or upgraded if needed)")
    parser.add_argument(
        "--session", action="append", default=[], help="copy only this session (repeatable)"
    )
    parser.set_defaults(run=run)
