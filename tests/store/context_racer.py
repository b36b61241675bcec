"""One of several processes driving `Context` on the same stored session, started by test_context_race.py.

``context_racer.py STORE WORKER TURNS``: waits for ``go`` on stdin, then runs ``TURNS``
turns (a user message, a request, a reply). A call the store refuses because another
process moved the session on (`StoreFailed`) is counted and the session reopened. Prints
``TURNS_DONE REFUSED`` at the end.
"""

from __future__ import annotations

import sys

from ctxrules.engine.context import Context, StoreFailed
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter


def _open(url: str) -> Context:
    return Context(
        model="gpt-4o",
        window=16_000,
        store=url,
        session="race",
        tokenizer=HeuristicCounter(),
        clock=lambda: 1_000.0,
        # Each call stored at once: a reply counted done is a stored reply (the race of
        # the default, stored per turn, is test_context_race.py's quick test).
        durability="request",
    )


def main() -> None:
    """Run the turns, reopening after each refusal."""
    url, worker, turns = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()
    ctx, done, refused = _open(url), 0, 0
    while done < turns:
        try:
            ctx.add({"role": "user", "content": f"worker {worker} turn {done}"})
            ctx.openai()
            ctx.record(openai_response(done, f"reply to {worker}/{done}", [], (100, 0)))
            done += 1
        except StoreFailed:
            refused += 1
            ctx.close()
            ctx = _open(url)
    ctx.close()
    sys.stdout.write(f"{done} {refused}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
