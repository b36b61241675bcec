"""Resume a stored session in this fresh process; print its cost as one JSON line.

    python bench/resume_process.py STORE [--session S] [--history] [--trace] [--expected FILE] [--now T] [--say TEXT]

By default it opens the session in a `Context` and builds the next ``openai()`` request:
``cpu`` is the CPU seconds from the `Context` call to the request, ``peak_mib`` the rise of
the process's peak resident memory (VmHWM) over what the imports and the ruler took.
``--history`` instead reads the whole session as `load_session` and an eagerly read last
commit hold it (every node, every item): what the history occupies in memory. ``--trace``
measures with tracemalloc (``traced_mib``: peak while resuming, or what the history holds
once read), in a run of its own because tracing slows Python down. ``--expected`` compares
the request's messages with a JSON file (``same``). ``--say`` adds a user message before the
request, as a restarted agent does: the request is then a new commit, built by the rules
(with ``--now`` far after the stored session, after the idle gap a restart usually is).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from pathlib import Path

from ctxrules import Context
from ctxrules.store import open_store
from ctxrules.tokens import load_encoding


def _hwm_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    """Parse the arguments, run one measurement, print it."""
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("--session", default="bench")
    parser.add_argument("--history", action="store_true")
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--expected")
    parser.add_argument("--now", type=float, default=1_000.0, help="the clock's reading")
    parser.add_argument("--say", help="a user message added before the request")
    args = parser.parse_args()
    ruler = load_encoding("cl100k_base").unwrap()
    gc.collect()
    before = _hwm_mib()
    if args.trace:
        tracemalloc.start()
    start = time.process_time()
    out: dict[str, object] = {}
    if args.history:
        store = open_store(args.store).unwrap()
        session = store.load_session(args.session).unwrap()
        commit = store.last_commit(args.session).unwrap()
        held = (session, commit)
        out["nodes"], out["items"] = len(session.graph), len(commit.items) if commit else 0
    else:
        ctx = Context(
            model="gpt-4o",
            window=128_000,
            store=args.store,
            session=args.session,
            tokenizer=ruler,
            clock=lambda: args.now,
        )
        if args.say is not None:
            ctx.add({"role": "user", "content": args.say})
        request = ctx.openai()
        held = (ctx, request)
        if args.expected:
            expected = json.loads(Path(args.expected).read_text())
            out["same"] = json.loads(json.dumps(request["messages"])) == expected
    out["cpu"] = round(time.process_time() - start, 4)
    out["peak_mib"] = round(max(_hwm_mib() - before, 0.0), 1)
    if args.trace:
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
        out["traced_mib"] = round((current if args.history else peak) / 2**20, 1)
    del held
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
