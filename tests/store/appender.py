"""A worker for the many-writers test: appends to shared sessions, rebasing on every conflict.

Run as ``python appender.py STORE WORKER COUNT SESSIONS``. Waits for a line on stdin, then
appends COUNT nodes round-robin to sessions ``s0..s{SESSIONS-1}``, each on the head it last
saw with `append_at_head`; a `HeadMoved` is a conflict: it rebases on the head named in
the failure and retries. Prints ``appended conflicts retried_errors seconds`` at the end.
"""

from __future__ import annotations

import sys
import time

from returns.result import Failure

from ctxrules.dag import Call
from ctxrules.store import HeadMoved, PostgresFailed, open_store


def main(argv: list[str]) -> int:
    """Append ``COUNT`` nodes and report how many conflicts were retried."""
    url, worker, count, sessions = argv[0], argv[1], int(argv[2]), int(argv[3])
    store = open_store(url).unwrap()
    heads: dict[str, str | None] = {}
    for k in range(sessions):
        store.create_session(f"s{k}").unwrap()
        heads[f"s{k}"] = store.get_head(f"s{k}").unwrap()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()
    conflicts = errors = 0
    started = time.perf_counter()
    for i in range(count):
        session_id = f"s{i % sessions}"
        node_id = f"w{worker}n{i}"
        while True:
            call = Call(node_id, "user", output=f"{worker} {i}", predecessor=heads[session_id])
            done = store.append_at_head(session_id, call)
            if not isinstance(done, Failure):
                heads[session_id] = node_id
                break
            failure = done.failure()
            if isinstance(failure, HeadMoved):
                conflicts += 1
                heads[session_id] = failure.actual
            elif isinstance(failure, PostgresFailed) and failure.retryable:
                errors += 1
            else:
                sys.stderr.write(f"{failure}\n")
                return 1
    elapsed = time.perf_counter() - started
    store.close()
    sys.stdout.write(f"{count} {conflicts} {errors} {elapsed:.3f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
