"""An agent loop on a store, killed by test_context_crash.py at a random moment.

``context_writer.py STORE [DURABILITY]``: turns of request, reply with a tool call and the tool's
result, forever; every fourth reply is an answer with no tool call, which ends its turn.
After each `Context` call returns it prints ``ack KIND NODES HEAD`` (the call, how many
nodes the session holds, its head): every printed line is a write the store acknowledged.
With ``turn`` (``durability="turn"``, the default) a request and an answer store, so only
those are acknowledged. Tool outputs come in every size, up to 60,000 characters.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

from ctxrules.engine.context import Context, Durability
from ctxrules.store import Store
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

SIZES = (40, 900, 6_000, 60_000)


#: Every this many turns the reply is an answer with no tool call.
ANSWER_EVERY = 4


def _reply(turn: int) -> dict[str, object]:
    if turn % ANSWER_EVERY == 0:
        return openai_response(turn, f"Done: task {turn}.", [], (900 + turn, 0))
    call = (f"call_{turn}", "read_file", {"path": f"src/m{turn}.py"})
    return openai_response(turn, f"Step {turn}: reading m{turn}.", [call], (900 + turn, 0))


def _ack(ctx: Context, kind: str) -> None:
    sys.stdout.write(f"ack {kind} {len(ctx.session.graph)} {ctx.session.head}\n")
    sys.stdout.flush()


def steps(ctx: Context, clock: list[float]) -> Iterator[str]:
    """The loop's calls, one per step, forever; each yields its kind once it returned."""
    turn = 0
    while True:
        turn += 1
        clock[0] += 1
        ctx.add({"role": "user", "content": f"Task {turn}: look at m{turn}."})
        yield "user"
        ctx.openai()
        yield "request"
        reply = ctx.record(_reply(turn))
        if not reply.tool_calls:
            yield "answer"
            continue
        yield "record"
        size = SIZES[turn % len(SIZES)]
        ctx.add_tool_result(reply.tool_calls[0].id, (f"line {turn} " * size)[:size])
        yield "result"


def loop_context(
    store: str | Store | None, clock: list[float], durability: Durability = "request"
) -> Context:
    """The loop's `Context` (on ``store``, or in memory for a replica of it)."""
    return Context(
        model="gpt-4o",
        window=16_000,
        store=store,
        session="crash",
        tokenizer=HeuristicCounter(),
        clock=lambda: clock[0],
        durability=durability,
    )


def main() -> None:
    """Run turns until killed."""
    clock = [1_000.0]
    modes: dict[str, Durability] = {"every_call": "every_call", "turn": "turn"}
    durability = modes.get(sys.argv[2] if sys.argv[2:] else "request", "request")
    ctx = loop_context(sys.argv[1], clock, durability)
    for kind in steps(ctx, clock):
        if durability != "turn" or kind in ("request", "answer"):
            _ack(ctx, kind)


if __name__ == "__main__":
    main()
