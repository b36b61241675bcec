"""An agent loop on a store, killed by test_context_crash.py at a random moment.

``context_writer.py STORE``: turns of request, reply with a tool call and the tool's
result, forever. After each `Context` call returns it prints ``ack KIND NODES HEAD``
(the call, how many nodes the session holds, its head): every printed line is a write the
store acknowledged. Tool outputs come in every size, up to 60,000 characters.
"""

from __future__ import annotations

import sys

from ctxrules.engine.context import Context
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

SIZES = (40, 900, 6_000, 60_000)


def _reply(turn: int) -> dict[str, object]:
    call = (f"call_{turn}", "read_file", {"path": f"src/m{turn}.py"})
    return openai_response(turn, f"Step {turn}: reading m{turn}.", [call], (900 + turn, 0))


def _ack(ctx: Context, kind: str) -> None:
    sys.stdout.write(f"ack {kind} {len(ctx.session.graph)} {ctx.session.head}\n")
    sys.stdout.flush()


def main() -> None:
    """Run turns until killed."""
    clock = [1_000.0]
    ctx = Context(
        model="gpt-4o",
        window=16_000,
        store=sys.argv[1],
        session="crash",
        tokenizer=HeuristicCounter(),
        clock=lambda: clock[0],
    )
    turn = 0
    while True:
        turn += 1
        clock[0] += 1
        ctx.add({"role": "user", "content": f"Task {turn}: look at m{turn}."})
        _ack(ctx, "user")
        ctx.openai()
        _ack(ctx, "request")
        reply = ctx.record(_reply(turn))
        _ack(ctx, "record")
        size = SIZES[turn % len(SIZES)]
        ctx.add_tool_result(reply.tool_calls[0].id, (f"line {turn} " * size)[:size])
        _ack(ctx, "result")


if __name__ == "__main__":
    main()
