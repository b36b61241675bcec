"""Appends per second through each store, many worker processes on shared sessions.

    python bench/store_throughput.py [--workers 8] [--appends 500] [--sessions 4]

Each worker is a separate process (``tests/store/appender.py``) that appends to the shared
sessions with ``append_at_head`` and rebases on every ``HeadMoved``. SQLite runs on a file
in a temporary folder (synchronous=FULL); PostgreSQL on a throwaway server started from the
local binaries (fsync on, defaults otherwise). The figure is all appends over the wall
time of the slowest worker; conflicts are the retried ``HeadMoved`` failures.
"""

import argparse
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "store"))


def main() -> int:
    """Run the workers on each backend and print one line per backend."""
    import pg_server  # noqa: PLC0415 - beside the store tests
    from test_many_writers import check_history, run_workers  # noqa: PLC0415 - same

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--appends", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=4)
    args = parser.parse_args()
    shape = (args.workers, args.appends, args.sessions)
    with tempfile.TemporaryDirectory() as folder:
        urls = {"sqlite": str(Path(folder) / "bench.db")}
        bindir = pg_server.find_bin()
        server = pg_server.start(bindir) if bindir is not None else "no PostgreSQL binaries"
        if isinstance(server, str):
            sys.stdout.write(f"postgresql: skipped ({server})\n")
        else:
            urls["postgresql"] = pg_server.fresh_schema_url(server)
        try:
            for backend, url in urls.items():
                run = run_workers(url, *shape)
                check_history(url, *shape)
                sys.stdout.write(
                    f"{backend:<10} {run.appended} appends ({args.workers} processes x "
                    f"{args.appends}, {args.sessions} sessions): {run.per_second:,.0f} appends/s, "
                    f"{run.conflicts} conflicts retried, 0 lost, 0 forks\n"
                )
        finally:
            if not isinstance(server, str):
                server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
