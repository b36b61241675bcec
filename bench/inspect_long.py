"""`ctxrules inspect` on a long stored session: what the page's data costs, in CPU and memory.

    python bench/inspect_long.py STORE [--session ID] [--export FILE.html]

Measures in one fresh process, as the server does it: the sessions list and the session's
overview (the first read), a poll of the session's version (the page asks once a second),
one page back through the history, each request's details, and the export of the session.
CPU time (`time.process_time`) and wall time, and the process's peak resident memory.
Goals at 100,000 messages: the page's data in at most 3 s of CPU and 400 MB, a poll in at
most 50 ms, the export at most 5 MB. Make a 100,000-message store with
``python bench/test_store_turn_bench.py`` 's `Loop` (see docs/inspect.md).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ctxrules.inspect.export import export_html
from ctxrules.inspect.read import Reader
from ctxrules.store import open_store

T = TypeVar("T")


def timed(what: str, work: Callable[[], T]) -> T:
    """Run ``work``; print its CPU and wall time."""
    cpu, wall = time.process_time(), time.perf_counter()
    value = work()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    sys.stdout.write(f"{what}: {cpu:.3f} s CPU, {wall:.3f} s wall\n")
    return value


def peak_mb() -> float:
    """The process's peak resident memory so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    """Read, poll, page, export; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--session")
    parser.add_argument("--export", help="write the export here (default: not kept)")
    args = parser.parse_args()
    sys.stdout.write(f"load average {os.getloadavg()[0]:.1f}; peak at start {peak_mb():.0f} MB\n")
    store = open_store(args.store, read_only=True).unwrap()
    reader = Reader(store)
    rows = timed("sessions list", lambda: reader.sessions().unwrap())
    session = args.session or rows[-1]["id"]
    data = timed("overview (read once the list was)", lambda: reader.session(session).unwrap())
    history = data.overview["history"]
    sys.stdout.write(
        f"  {data.overview['session']['nodes']:,} nodes ({len(history['nodes'])} drawn), "
        f"{len(data.requests)} requests, {reader.items_read():,} items read; "
        f"peak {peak_mb():.0f} MB\n"
    )
    polls = 20
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(polls):
        reader.version(session).unwrap()
    sys.stdout.write(
        f"poll: {(time.process_time() - cpu) / polls * 1000:.1f} ms CPU, "
        f"{(time.perf_counter() - wall) / polls * 1000:.1f} ms wall (mean of {polls})\n"
    )
    timed("page back in the history", lambda: reader.history(session, history["start"]).unwrap())
    timed(
        "every request's details",
        lambda: [reader.request(session, r.index).unwrap() for r in data.requests],
    )
    html = timed("export", lambda: export_html(reader, session).unwrap())
    if args.export:
        Path(args.export).write_text(html, encoding="utf-8")
    sys.stdout.write(
        f"export: {len(html.encode()):,} bytes; peak {peak_mb():.0f} MB; "
        f"load average {os.getloadavg()[0]:.1f}\n"
    )
    reader.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
