"""What a call on a PostgreSQL store costs while its server is away, and the first one after.

    python bench/store_server_down.py [--calls 10] [--connect-timeout 2]

A throwaway server is started from the local binaries. "stopped": the server is stopped
as a crash would stop it (``pg_ctl -m immediate``), then started again. "not answering":
the store reaches the server through a TCP proxy that drops its connections and then
accepts new ones but answers nothing (as a lost host does), then forwards again. Each
line gives the wall time of every ``list_sessions`` call while the server is away (each a
retryable ``PostgresFailed``) and of the first call once it is back.
"""

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "store"))


def main() -> int:
    """Measure both ways of losing the server and print one line for each."""
    import pg_server  # noqa: PLC0415 - beside the store tests
    from pg_proxy import Proxy  # noqa: PLC0415 - same
    from returns.result import Failure  # noqa: PLC0415

    from ctxrules.store.postgres import PostgresStore  # noqa: PLC0415 - needs the extra

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--connect-timeout", type=float, default=2.0)
    args = parser.parse_args()
    bindir = pg_server.find_bin()
    server = pg_server.start(bindir) if bindir is not None else "no PostgreSQL binaries"
    if isinstance(server, str):
        sys.stdout.write(f"skipped: {server}\n")
        return 0
    try:
        for way in ("stopped", "not answering"):
            url = pg_server.fresh_schema_url(server)
            proxy = Proxy(server.root / ".s.PGSQL.5432")
            if way == "not answering":
                url = proxy.url(url.rpartition("%3D")[2])
            store = PostgresStore.open(url, connect_timeout=args.connect_timeout).unwrap()
            store.create_session("s").unwrap()
            server.halt() if way == "stopped" else proxy.cut()
            spent, failed = [], 0
            for _ in range(args.calls):
                started = time.perf_counter()
                failed += isinstance(store.list_sessions(), Failure)
                spent.append(time.perf_counter() - started)
            server.resume() if way == "stopped" else proxy.mend()
            started = time.perf_counter()
            back = store.list_sessions()
            after = time.perf_counter() - started
            store.close()
            proxy.close()
            shown = " ".join(f"{s:.3f}" for s in spent)
            sys.stdout.write(
                f"{way:<14} {failed}/{args.calls} failed, seconds each: {shown}; "
                f"first call after: {after:.3f} s ({'failed' if isinstance(back, Failure) else 'ok'})\n"
            )
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
