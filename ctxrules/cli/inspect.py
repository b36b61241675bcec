"""`ctxrules inspect STORE`: a local web page of a store's sessions, or `--export` one as a file."""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import Any, TextIO

from returns.result import Failure

from ctxrules.cli.options import missing_module
from ctxrules.cli.stored_log import missing_session
from ctxrules.store.protocol import Store
from ctxrules.store.redact import shown_url

INSTALL = "pip install 'ctxrules[inspect]'"


def _wal(path: str) -> bool:
    return Path(f"{path}-wal").exists()


def _signature(path: str) -> tuple[bool, int, int] | None:
    """Whether a write-ahead log is beside the file, and the file's mtime and size."""
    try:
        found = Path(path).stat()
    except OSError:
        return None
    return _wal(path), found.st_mtime_ns, found.st_size


def _opener(path: str) -> tuple[Store | str, Any]:
    """The store opened read-only, and how to reopen it when a writer starts after us."""
    from ctxrules.store import open_store, parse_store_url  # noqa: PLC0415 - the only I/O layer

    where = parse_store_url(path)
    if isinstance(where, Failure):
        return str(where.failure()), None
    target = where.unwrap()
    if target.backend == "sqlite" and not Path(target.target).is_file():
        return f"{shown_url(path)}: no such store", None
    # Taken before opening: a write between the two is seen as a change, not missed.
    seen = {"at": _signature(target.target) if target.backend == "sqlite" else None}
    opened = open_store(path, read_only=True)
    if isinstance(opened, Failure):
        return str(opened.failure()), None
    if target.backend != "sqlite":
        return opened.unwrap(), None

    # A file read with no write-ahead log beside it is read as immutable: once a writer
    # starts (the log appears), or wrote and closed between two looks (the log is gone
    # again but the file changed), the connection must be opened again to see its writes.
    def reopen(store: Store) -> Store:
        was, now = seen["at"], _signature(target.target)
        if was is None or was[0] or now is None or now == was:
            return store
        again = open_store(path, read_only=True)
        if isinstance(again, Failure):
            return store
        store.close()
        seen["at"] = now
        return again.unwrap()

    return opened.unwrap(), reopen


def _latest(reader: Any) -> str | None:  # noqa: ANN401 - a Reader, imported lazily
    listed = reader.store.list_sessions().value_or([])
    return listed[-1].id if listed else None


def _unknown(reader: Any, args: argparse.Namespace) -> str | None:  # noqa: ANN401 - a Reader
    """Why the session named on the command line cannot be opened, or None when it can."""
    if args.session is None:
        return None
    listed = reader.store.list_sessions()
    if isinstance(listed, Failure):
        return f"{shown_url(args.store)}: {listed.failure()}"
    if all(info.id != args.session for info in listed.unwrap()):
        return missing_session(args.store, args.session)
    return None


def _export(reader: Any, args: argparse.Namespace, out: TextIO) -> int:  # noqa: ANN401
    from ctxrules.inspect.export import export_html  # noqa: PLC0415 - needs no web framework

    session = args.session or _latest(reader)
    if session is None:
        sys.stderr.write(f"{shown_url(args.store)} holds no sessions to export\n")
        return 2
    if unknown := _unknown(reader, args):
        sys.stderr.write(unknown + "\n")
        return 2
    html = export_html(reader, session, label=shown_url(args.store))
    if isinstance(html, Failure):
        sys.stderr.write(f"{html.failure()}\n")
        return 2
    target = Path(args.export)
    try:
        target.write_text(html.unwrap(), encoding="utf-8")
    except OSError as error:
        sys.stderr.write(f"cannot write {target}: {error.strerror}\n")
        return 2
    out.write(f"exported session {session} to {target} ({target.stat().st_size:,} bytes)\n")
    return 0


def _serve(reader: Any, args: argparse.Namespace, out: TextIO) -> int:  # noqa: ANN401
    import uvicorn  # noqa: PLC0415 - the [inspect] extra

    from ctxrules.inspect.server import build_app  # noqa: PLC0415 - the [inspect] extra

    # A session the store lacks would print a URL whose page silently opens another one.
    if unknown := _unknown(reader, args):
        sys.stderr.write(unknown + "\n")
        return 2
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", args.port))
        # Listening before the URL is printed: a browser opened at once waits in the backlog
        # until the server accepts, instead of being refused.
        listener.listen(128)
    except OSError as error:
        sys.stderr.write(f"cannot listen on 127.0.0.1:{args.port}: {error.strerror}\n")
        return 2
    # The session the page opens first is read now, so the page's first load does not wait.
    session = args.session or _latest(reader)
    if session is not None:
        reader.session(session)
    port = listener.getsockname()[1]
    hash_part = f"#session={args.session}" if args.session else ""
    config = uvicorn.Config(build_app(reader), log_level="warning", lifespan="off")
    out.write(f"ctxrules inspect: http://127.0.0.1:{port}/{hash_part} (Ctrl-C stops)\n")
    out.flush()
    uvicorn.Server(config).run(sockets=[listener])
    return 0


def run_inspect(args: argparse.Namespace, out: TextIO) -> int:
    """Serve the inspector on 127.0.0.1, or write one session's page with ``--export``."""
    if args.export is None:
        for module in ("starlette", "uvicorn"):
            if absent := missing_module(module, INSTALL, "ctxrules inspect"):
                sys.stderr.write(absent + " (--export FILE.html needs nothing more)\n")
                return 2
    from ctxrules.inspect.read import Reader  # noqa: PLC0415 - the store layer, lazily

    store, reopen = _opener(args.store)
    if isinstance(store, str):
        sys.stderr.write(store + "\n")
        return 2
    reader = Reader(store, args.window, reopen=reopen)
    try:
        return _export(reader, args, out) if args.export is not None else _serve(reader, args, out)
    finally:
        reader.close()


def register(commands: Any) -> None:  # noqa: ANN401 - argparse's subparsers type is private
    """Add the ``inspect`` subcommand."""
    parser = commands.add_parser(
        "inspect", help="a local web page of a store's sessions, commits and occupancy"
    )
    parser.add_argument("store", help="the store: a path, sqlite:///PATH or postgresql://...")
    parser.add_argument(
        "session", nargs="?", default=None, help="the session to open (default: the newest)"
    )
    parser.add_argument(
        "--port", type=int, default=8765, help="port on 127.0.0.1 (default 8765; 0 picks one)"
    )
    parser.add_argument(
        "--export",
        default=None,
        metavar="FILE.html",
        help="write the session's views to one self-contained HTML file instead of serving",
    )
    parser.add_argument(
        "--window",
        type=int,
        default=200_000,
        help="context window assumed where the store does not record one (default 200000)",
    )
    parser.set_defaults(run=run_inspect)
