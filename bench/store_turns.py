"""A `Context` turn with no store, SQLite and PostgreSQL side by side, in one process.

    python bench/store_turns.py                       # 1k, 10k and 100k messages
    python bench/store_turns.py --sizes 1000 10000    # chosen sizes
    python bench/store_turns.py --backends none sqlite
    python bench/store_turns.py --sizes 1000 --backends none sqlite sqlite:every_call
    python bench/store_turns.py --sizes 100000 --seed big.sqlite   # sessions copied, not filled

A backend named ``KIND`` is that store with `Context`'s default durability (``"turn"``: one
transaction a turn, at the request); ``KIND:request`` with ``durability="request"`` (a
transaction per call, synced at each request), ``KIND:every_call`` with
``durability="every_call"`` (a sync at every call), ``KIND:turn`` names the default.
``--seed`` starts the stores' sessions of the largest size from a SQLite store whose session ``bench`` holds
the history (made by this loop): SQLite's from a copy of the file, PostgreSQL's by
`copy_sessions` (what ``ctxrules migrate`` runs; its time is printed); the no-store session
is filled in memory.

A turn is `store_loop.Loop.one_turn`: add a user message, record a response with a tool
call, add its result, build ``openai()``. Each backend's session is filled to the size
through `Context`, then the backends' turns are interleaved round by round. Per turn:
``cpu_ms`` (``time.process_time`` of this process: the client's own cost), ``wall_ms``
(with the fsyncs and the database's round trips), ``statements`` (SQLite's statement
trace; PostgreSQL's Query and Execute messages), ``round_trips`` (PostgreSQL: the times
the client sent and then waited for an answer), ``transactions``, and ``bytes`` written
(SQLite: the bytes this process wrote, ``wchar`` of /proc/self/io; PostgreSQL: the WAL the
server wrote, ``pg_current_wal_lsn``).

Each round gives every backend two turns: one counted (the statement trace on, not
timed) and one timed (the trace off). The trace is the benchmark's own work: SQLite calls
back into Python with each statement's SQL, its values written in, and libpq writes every
message to a file; timed with the turn it added 0.2-0.4 ms to a store's turn.
Figures are medians. PostgreSQL runs on a throwaway server (``tests/store/pg_server.py``)
when its binaries and psycopg are installed. docs/performance.md quotes the output.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "store"))

from store_loop import Loop  # noqa: E402 - beside this script

from ctxrules.engine.context import Durability  # noqa: E402
from ctxrules.store.copy import copy_sessions  # noqa: E402
from ctxrules.store.protocol import Store  # noqa: E402
from ctxrules.store.url import open_store  # noqa: E402
from ctxrules.tokens import load_encoding  # noqa: E402

ROUNDS = {1_000: 30, 10_000: 20, 100_000: 10}


@attrs.define
class Counts:
    """What the store did during one turn."""

    statements: int = 0
    round_trips: int = 0
    transactions: int = 0


class Meter:
    """Counts a store's statements (and PostgreSQL's round trips) and the bytes it wrote."""

    def __init__(self, backend: str, store: Store | None, folder: Path, name: str = "") -> None:
        self.backend, self.store, self.folder = backend, store, folder
        self.counts = Counts()
        self._trace = folder / f"{name or backend}.trace".replace(":", "-")
        #: Whether the statements are traced (and counted): never while a turn is timed.
        self.tracing = False
        if backend == "postgresql":
            self._patch_pg()

    def trace(self, on: bool) -> None:
        """Count the statements from now (``on``), or stop tracing them."""
        self.tracing = on
        if self.backend == "sqlite":
            callback = self._sqlite_statement if on else None
            self.store._conn.set_trace_callback(callback)  # type: ignore[union-attr]  # noqa: SLF001

    def _sqlite_statement(self, sql: str) -> None:
        # Lines starting "--" are the steps of a trigger or of the full-text index.
        if not sql.startswith("--"):
            self.counts.statements += 1
            self.counts.transactions += sql.startswith("BEGIN")

    def _patch_pg(self) -> None:
        # Every connection this store's pool lends is traced by libpq into one file.
        from psycopg.pq import Trace  # noqa: PLC0415 - PostgreSQL only

        from ctxrules.store.postgres.link import Link  # noqa: PLC0415 - PostgreSQL only

        mine = self.store._link  # type: ignore[union-attr]  # noqa: SLF001
        lend = Link.connection
        handle = self._trace.open("wb")

        @contextmanager
        def traced(link: Link) -> Iterator[Any]:
            with lend(link) as conn:
                if link is not mine or not self.tracing:
                    yield conn
                    return
                conn.pgconn.trace(handle.fileno())
                conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS | Trace.REGRESS_MODE)
                try:
                    yield conn
                finally:
                    conn.pgconn.untrace()

        Link.connection = traced  # type: ignore[assignment,method-assign]
        self._handle = handle

    def bytes_now(self) -> int:
        """A counter of bytes written so far (file sizes, or the WAL position)."""
        if self.backend == "sqlite":
            # What this process handed to write(): the log's frames and their headers.
            for line in Path("/proc/self/io").read_text().splitlines():
                if line.startswith("wchar:"):
                    return int(line.split()[1])
        if self.backend == "postgresql":
            import psycopg  # noqa: PLC0415 - PostgreSQL only

            with psycopg.connect(self.store.dsn, autocommit=True) as conn:  # type: ignore[union-attr]
                row = conn.execute("SELECT pg_current_wal_lsn() - '0/0'").fetchone()
            return int(row[0]) if row else 0
        return 0

    def read_pg(self) -> Counts:
        """The PostgreSQL messages traced since the last read."""
        self._handle.flush()
        text = self._trace.read_text(errors="replace")
        self._trace.write_bytes(b"")
        self._handle.seek(0)
        counts, last = Counts(), ""
        for line in text.splitlines():
            side, _, rest = line.partition("\t")
            fields = rest.split("\t")
            kind = fields[1].split(" ")[0] if len(fields) > 1 else ""
            if side == "B" and kind == "CommandComplete":
                # One per statement the server ran, however many one message held.
                counts.statements += 1
                counts.transactions += '"BEGIN"' in rest
            if side == "B" and last == "F":
                counts.round_trips += 1
            if side in ("F", "B"):
                last = side
        return counts


@attrs.define
class Side:
    """One backend's loop and what its turns measured."""

    backend: str
    loop: Loop
    meter: Meter
    cpu: list[float] = attrs.Factory(list)
    wall: list[float] = attrs.Factory(list)
    counts: list[Counts] = attrs.Factory(list)
    written: list[int] = attrs.Factory(list)

    def turn(self) -> None:
        """One timed turn (nothing traced), with the bytes it wrote."""
        before = self.meter.bytes_now()
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        self.loop.one_turn()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        self.cpu.append(cpu * 1000)
        self.wall.append(wall * 1000)
        self.written.append(self.meter.bytes_now() - before)

    def counted_turn(self) -> None:
        """One turn with its statements traced and counted, not timed."""
        self.meter.counts = Counts()
        pg = self.meter.backend == "postgresql"
        if pg:
            self.meter.read_pg()
        self.meter.trace(on=True)
        try:
            self.loop.one_turn()
        finally:
            self.meter.trace(on=False)
        self.counts.append(self.meter.read_pg() if pg else self.meter.counts)

    def row(self, size: int) -> dict[str, Any]:
        """The medians of this backend's turns."""
        med = statistics.median
        return {
            "size": size,
            "backend": self.backend,
            "cpu_ms": round(med(self.cpu), 2),
            "wall_ms": round(med(self.wall), 2),
            "statements": med([c.statements for c in self.counts] or [0]),
            "round_trips": med([c.round_trips for c in self.counts] or [0]),
            "transactions": med([c.transactions for c in self.counts] or [0]),
            "bytes": med(self.written),
            "load": round(os.getloadavg()[0], 1),
        }


def pg_server() -> tuple[Callable[[], str] | None, Callable[[], None]]:
    """A maker of fresh PostgreSQL stores, and the server's stop; None where there is none."""
    try:
        import pg_server as server_module  # noqa: PLC0415 - beside the store tests
        import psycopg  # noqa: F401, PLC0415 - the extra may be missing
    except ImportError:
        return None, lambda: None
    bindir = server_module.find_bin()
    server = server_module.start(bindir) if bindir is not None else None
    if server is None or isinstance(server, str):
        return None, lambda: None
    return (lambda: server_module.fresh_schema_url(server)), server.stop


def _store(
    backend: str, path: Path, make_pg: Callable[[], str] | None, seed: Path | None
) -> Store | None:
    """A new store of ``backend`` (None for no store), holding ``seed``'s sessions if given."""
    if backend == "sqlite":
        if seed is not None:
            shutil.copyfile(seed, path)
        return open_store(str(path)).unwrap()
    if backend == "postgresql" and make_pg is not None:
        store = open_store(make_pg()).unwrap()
        if seed is not None:
            wall, cpu = time.perf_counter(), time.process_time()
            with open_store(str(seed)).unwrap() as source:
                copy_sessions(source, store).unwrap()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            load = os.getloadavg()[0]
            sys.stderr.write(f"postgresql: seeded by copy_sessions in {wall:.0f} s wall, ")
            sys.stderr.write(f"{cpu:.0f} s CPU of this process, load {load:.1f}\n")
        return store
    return None


def measure(
    sizes: Sequence[int],
    backends: Sequence[str],
    rounds: int | None,
    folder: Path,
    seed: Path | None = None,
) -> list[dict[str, Any]]:
    """Every backend's turn at every size, rounds interleaved between the backends."""
    ruler = load_encoding("cl100k_base").unwrap()
    wants_pg = any(b.startswith("postgresql") for b in backends)
    make_pg, stop_pg = pg_server() if wants_pg else (None, lambda: None)
    rows: list[dict[str, Any]] = []
    try:
        for size in sizes:
            sides: list[Side] = []
            for backend in backends:
                kind, _, sync = backend.partition(":")
                if kind == "postgresql" and make_pg is None:
                    sys.stderr.write("postgresql: no server (binaries or psycopg missing)\n")
                    continue
                seeded = seed if kind != "none" and size == max(sizes) else None
                path = folder / f"{size}-{sync or 'default'}.sqlite"
                store = _store(kind, path, make_pg, seeded)
                durability: Durability | None = sync or None  # type: ignore[assignment]
                loop = Loop(store, size, ruler, fill=seeded is None, durability=durability)
                sides.append(Side(backend, loop, Meter(kind, store, folder, backend)))
            for side in sides:
                side.loop.one_turn()  # a warm-up turn each
            for _ in range(rounds or ROUNDS.get(size, 10)):
                for side in sides:
                    side.counted_turn()
                    side.turn()
            for side in sides:
                rows.append(side.row(size))
                sys.stderr.write(f"{rows[-1]}\n")
                side.loop.ctx.close()
                if side.meter.store is not None:
                    side.meter.store.close()
    finally:
        stop_pg()
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table, each backend's CPU also as a ratio to no store."""
    base = {r["size"]: r["cpu_ms"] for r in rows if r["backend"] == "none"}
    first = {r["backend"]: r["cpu_ms"] for r in rows if r["size"] == min(base or [0])}
    out = [
        "| messages | store | CPU ms | ÷ no store | ÷ smallest | wall ms | statements | round trips | transactions | bytes written | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        vs_none = r["cpu_ms"] / base[r["size"]] if r["size"] in base else float("nan")
        vs_first = r["cpu_ms"] / first[r["backend"]] if r["backend"] in first else float("nan")
        out.append(
            f"| {r['size']:,} | {r['backend']} | {r['cpu_ms']:.2f} | {vs_none:.2f}x "
            f"| {vs_first:.2f}x | {r['wall_ms']:.2f} | {r['statements']:g} "
            f"| {r['round_trips']:g} | {r['transactions']:g} | {r['bytes']:,.0f} | {r['load']} |"
        )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the arguments, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument(
        "--backends",
        nargs="+",
        default=["none", "sqlite", "postgresql"],
        choices=[
            "none",
            "sqlite",
            "postgresql",
            "sqlite:every_call",
            "postgresql:every_call",
            "sqlite:turn",
            "postgresql:turn",
            "sqlite:request",
            "postgresql:request",
        ],
    )
    parser.add_argument("--rounds", type=int, help="timed turns per backend and size")
    parser.add_argument(
        "--seed", type=Path, help="a SQLite store holding the session to start from"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        rows = measure(args.sizes, args.backends, args.rounds, Path(folder), args.seed)
    sys.stdout.write(f"load average: {os.getloadavg()[0]:.1f}\n{table(rows)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
