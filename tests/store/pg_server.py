"""A throwaway PostgreSQL server for the tests: initdb into a temporary folder, a unix socket.

Run as root, the server runs as the ``postgres`` user (PostgreSQL refuses root). The
binaries come from ``CTXRULES_PG_BIN``, ``pg_config --bindir`` or /usr/lib/postgresql.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest


def find_bin() -> Path | None:
    """The folder holding initdb and pg_ctl, or None where PostgreSQL is not installed."""
    candidates = [os.environ.get("CTXRULES_PG_BIN", "")]
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(str(Path(on_path).parent))
    candidates += sorted(map(str, Path("/usr/lib/postgresql").glob("*/bin")), reverse=True)
    for folder in candidates:
        if folder and (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    return None


def _runner() -> list[str] | str:
    # PostgreSQL refuses to run as root; as root, run it as the postgres user.
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return "running as root and there is no 'postgres' user to run the server as"
    return ["runuser", "-u", "postgres", "--"]


#: The server's options: no TCP, the socket in its own folder.
_OPTIONS = "-c listen_addresses='' -k %s -p 5432 -c max_connections=60"


@attrs.frozen
class Server:
    """A running server: its folder, and the URL of its ``postgres`` database."""

    bindir: Path
    root: Path
    runner: tuple[str, ...]

    def url(self, options: str = "") -> str:
        """A libpq URL to the server over its unix socket."""
        extra = f"&options={options}" if options else ""
        return f"postgresql://postgres@/postgres?host={self.root}&port=5432{extra}"

    def halt(self) -> None:
        """Stop the server at once (as a crash would), keeping its folder to start it again."""
        self._pg_ctl("-m", "immediate", "stop")

    def resume(self) -> None:
        """Start the halted server again on the same folder and socket, waiting until it answers."""
        done = self._pg_ctl(
            "-l", str(self.root / "log"), "-w", "-t", "60", "-o", _OPTIONS % self.root, "start"
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"pg_ctl start failed: {(done.stderr or done.stdout).strip()[-300:]}"
            )

    def stop(self) -> None:
        """Stop the server at once and remove its folder."""
        self.halt()
        shutil.rmtree(self.root, ignore_errors=True)

    def _pg_ctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [*self.runner, str(self.bindir / "pg_ctl"), "-D", str(self.root / "data"), *args]
        return subprocess.run(command, capture_output=True, text=True, check=False)


def start(bindir: Path) -> Server | str:
    """Start a fresh server; the reason it could not start otherwise."""
    runner = _runner()
    if isinstance(runner, str):
        return runner
    root = Path(tempfile.mkdtemp(prefix="ctxrules-pg-"))
    if runner:
        shutil.chown(root, "postgres", "postgres")
    data = root / "data"
    steps = [
        [
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "-N",
        ],
        [
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(root / "log"),
            "-w",
            "-t",
            "60",
            "-o",
            _OPTIONS % root,
            "start",
        ],
    ]
    for step in steps:
        done = subprocess.run([*runner, *step], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            shutil.rmtree(root, ignore_errors=True)
            return f"{Path(step[0]).name} failed: {(done.stderr or done.stdout).strip()[-300:]}"
    return Server(bindir, root, tuple(runner))


def fresh_schema_url(server: Server) -> str:
    """A URL whose ``search_path`` is a new, empty schema: a store of its own."""
    import psycopg  # noqa: PLC0415 - only where PostgreSQL runs

    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    return server.url(options=f"-csearch_path%3D{name}")


def running() -> Iterator[Server]:
    """A server for a session-scoped fixture: skips where none can run, stops it at the end."""
    if importlib.util.find_spec("psycopg") is None:
        pytest.skip("psycopg is not installed: pip install 'ctxrules[postgres]'")
    bindir = find_bin()
    if bindir is None:
        pytest.skip("no PostgreSQL binaries (initdb, pg_ctl) on this machine; set CTXRULES_PG_BIN")
    server = start(bindir)
    if isinstance(server, str):
        pytest.fail(f"PostgreSQL is installed but did not start: {server}")
    yield server
    server.stop()
