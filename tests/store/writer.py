"""A writer process for the crash and concurrency tests: appends nodes and acknowledges each.

Run as ``python writer.py STORE SESSION PREFIX COUNT SYNCHRONOUS [--wait-go]``, STORE a
path (SQLite, opened with SYNCHRONOUS) or a ``postgresql://`` URL. Prints
``ready`` once the store is open, then ``<seq> <node id>`` after each append returns and
``done <node id>`` after each completion returns, flushing every line, so the parent
knows exactly which writes were acknowledged.
"""

from __future__ import annotations

import sys

from ctxrules.dag import Call
from ctxrules.store import SqliteStore, Store, open_store

#: Every this-many nodes is appended running and then completed, to crash inside that too.
COMPLETE_EVERY = 4


def _ack(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    """Append ``COUNT`` nodes in a chain, acknowledging each write after it returns."""
    path, session_id, prefix, count, synchronous = argv[:5]
    store: Store = (
        open_store(path).unwrap()
        if path.startswith("postgresql://")
        else SqliteStore.open(path, synchronous=synchronous).unwrap()  # type: ignore[arg-type]
    )
    store.create_session(session_id).unwrap()
    _ack("ready")
    if "--wait-go" in argv:
        sys.stdin.readline()
    previous = None
    for i in range(int(count)):
        running = i % COMPLETE_EVERY == COMPLETE_EVERY - 1
        node_id = f"{prefix}{i}"
        call = Call(
            node_id,
            "tool" if running else "user",
            name="step",
            input={"i": i},
            output=None if running else f"{prefix} message {i}",
            predecessor=previous,
            status="running" if running else "done",
        )
        seq = store.append_node(session_id, call).unwrap()
        _ack(f"{seq} {node_id}")
        if running:
            store.complete_node(session_id, node_id, f"{prefix} result {i}").unwrap()
            _ack(f"done {node_id}")
        previous = node_id
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
