"""Where a PostgreSQL store's WAL goes during agent turns, by table and index (``pg_waldump``).

    python bench/store_wal.py                          # 1k and 100k messages, 30 turns each
    python bench/store_wal.py --sizes 100000 --wal-compression lz4

A session is filled to each size through `Context` (`store_loop.Loop`) on a throwaway
server (``tests/store/pg_server.py``), then the server checkpoints and the loop runs its
turns: the WAL those turns wrote is read back with ``pg_waldump`` and each record's bytes
and full-page images are counted against the relation of its first block. Right after a
checkpoint, the first change to each page writes the whole page (``full_page_writes``),
so an index whose new keys land on random pages writes a page image per new key once it
has more pages than a turn touches: that is what grows from 1k to 100k messages.
``--wal-compression`` sets the server's ``wal_compression`` first (``pglz``, ``lz4``,
``zstd`` where the server was built with them). docs/store.md quotes the output.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests" / "store")]

import pg_server  # noqa: E402 - beside the store tests
import psycopg  # noqa: E402 - the postgresql extra
from store_loop import Loop  # noqa: E402

from ctxrules.tokens import load_encoding  # noqa: E402

_RECORD = re.compile(r"len \(rec/tot\):\s*\d+/\s*(\d+)")
_BLOCK = re.compile(r"rel \d+/\d+/(\d+)(?: fork \w+)? blk \d+( FPW)?")


def waldump(bindir: Path) -> Path | None:
    """``pg_waldump`` beside the server's binaries, or in a packaged PostgreSQL's folder."""
    folders = [bindir, *sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)]
    return next((f / "pg_waldump" for f in folders if (f / "pg_waldump").is_file()), None)


def by_relation(dump: str, names: dict[str, str]) -> dict[str, list[int]]:
    """Per relation: [records, page images, bytes], each record counted against its first block."""
    found: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    for line in dump.splitlines():
        blocks = _BLOCK.findall(line)
        for node, image in blocks:
            row = found[names.get(node, node)]
            row[0] += 1
            row[1] += bool(image)
        size = _RECORD.search(line)
        if size and blocks:
            found[names.get(blocks[0][0], blocks[0][0])][2] += int(size.group(1))
    return found


def measure(
    size: int, turns: int, compression: str | None, dump_bin: Path, server: pg_server.Server
) -> str:
    """The table of one size: WAL a turn right after a checkpoint, by relation."""
    url = pg_server.fresh_schema_url(server)
    admin = server.url()
    if compression:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"ALTER SYSTEM SET wal_compression = '{compression}'")
            conn.execute("SELECT pg_reload_conf()")
        time.sleep(1)  # the server reloads its settings after answering
    with psycopg.connect(admin, autocommit=True) as conn:
        setting = conn.execute("SHOW wal_compression").fetchone()
    started = time.perf_counter()
    loop = Loop(url, size, load_encoding("cl100k_base").unwrap())
    filled = time.perf_counter() - started
    for _ in range(5):
        loop.one_turn()
    schema = url.split("search_path%3D", 1)[1]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        start = conn.execute("SELECT pg_current_wal_lsn()").fetchone()
        for _ in range(turns):
            loop.one_turn()
        end = conn.execute("SELECT pg_current_wal_lsn()").fetchone()
        total = conn.execute("SELECT pg_wal_lsn_diff(%s, %s)", (end[0], start[0])).fetchone()
        names = {
            str(node): str(name)
            for node, name in conn.execute(
                "SELECT c.relfilenode, c.relname FROM pg_class c"
                " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s",
                (schema,),
            ).fetchall()
        }
    loop.ctx.close()
    wal = server.root / "data" / "pg_wal"
    done = subprocess.run(  # noqa: S603 - our own server's binaries and folder
        [*server.runner, str(dump_bin), "-p", str(wal), "-s", str(start[0]), "-e", str(end[0])],
        capture_output=True,
        text=True,
        check=False,
    )
    rows = sorted(by_relation(done.stdout, names).items(), key=lambda kv: -kv[1][2])
    kb = float(total[0]) / turns / 1024
    head = (
        f"{size:,} messages (filled in {filled:.0f} s), wal_compression={setting[0]}:"
        f" {kb:.1f} kB of WAL a turn over {turns} turns after a checkpoint"
    )
    lines = [
        head,
        "| relation | records a turn | page images a turn | kB a turn |",
        "|---|---:|---:|---:|",
    ]
    lines += [
        f"| {name} | {r / turns:.1f} | {i / turns:.1f} | {b / turns / 1024:.1f} |"
        for name, (r, i, b) in rows[:12]
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the WAL of the turns at each size, by relation."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--wal-compression", dest="compression")
    args = parser.parse_args(argv)
    bindir = pg_server.find_bin()
    dump_bin = waldump(bindir) if bindir is not None else None
    if bindir is None or dump_bin is None:
        sys.stderr.write("no PostgreSQL binaries (initdb, pg_waldump) found\n")
        return 1
    server = pg_server.start(bindir)
    if isinstance(server, str):
        sys.stderr.write(f"{server}\n")
        return 1
    try:
        for size in args.sizes:
            sys.stdout.write(measure(size, args.turns, args.compression, dump_bin, server) + "\n\n")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
