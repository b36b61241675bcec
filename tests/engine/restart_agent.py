"""An agent loop on a store, run as its own process by test_context_restart.py.

``run STORE N``: N turns (request, reply with a tool call, the tool's result), then
"ready" and wait to be killed. ``next STORE N``: reopen the store and print the request
of turn N as JSON. ``fresh N``: both in one process with no store, the reference.
``run-bg``/``next-bg``: the same with summaries written in the background by a summarizer
that never finishes in time, so one is under way when the process is killed. Each call is
stored at once (``durability="request"``), except in ``run-turn``/``next-turn``: stored per
turn (the default), the run also builds the request of turn N before it waits, and only
what a request stored survives the kill.
"""

from __future__ import annotations

import json
import sys
import time

from ctxrules.engine.context import Context, Durability
from ctxrules.render import Message, TextBlock
from ctxrules.tokens import HeuristicCounter

WINDOW = 32_000


def summarize(prompt: tuple[Message, ...]) -> str:
    """A deterministic stand-in for the model's summary."""
    text = " ".join(b.text for m in prompt for b in m.blocks if isinstance(b, TextBlock))
    return "## Goal\n" + text[:200]


def hanging(prompt: tuple[Message, ...]) -> str:
    """A summarizer still writing when the process dies (a daemon thread: exit is not held up)."""
    time.sleep(60)
    return summarize(prompt)


def _context(
    store: str | None,
    clock: list[float],
    *,
    background: bool = False,
    durability: Durability = "request",
) -> Context:
    return Context(
        "default",
        model="gpt-4o",
        window=WINDOW,
        system="You are a careful coding agent.",
        tools=[{"name": "read_file", "input_schema": {"type": "object"}}],
        store=store,
        session="restart-demo",
        summarizer=hanging if background else summarize,
        tokenizer=HeuristicCounter(),
        clock=lambda: clock[0],
        background=background,
        durability=durability,
    )


def _reply(turn: int, request: dict[str, object]) -> dict[str, object]:
    prompt = len(json.dumps(request)) // 4
    return {
        "id": f"r{turn}",
        "object": "chat.completion",
        "created": turn,
        "model": "gpt-4o",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": f"Step {turn}: " + f"notes on module {turn}; " * 200,
                    "tool_calls": [
                        {
                            "id": f"call_{turn}",
                            "type": "function",
                            "function": {
                                "name": "read_file",
                                "arguments": json.dumps({"path": f"src/mod{turn}.py"}),
                            },
                        }
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20},
    }


def turns(ctx: Context, clock: list[float], count: int) -> list[tuple[str, ...]]:
    """Run ``count`` turns; the decision path of each request."""
    if ctx.session.head is None:
        ctx.add({"role": "user", "content": "Read every module and summarise the package."})
    paths = []
    for turn in range(count):
        clock[0] = 1_000.0 + 600.0 * turn
        request = ctx.openai()
        assert ctx.last is not None
        paths.append(ctx.last.decision_path)
        ctx.record(_reply(turn, request))
        body = "\n".join(
            f"def f{turn}_{i}(x):\n    return x * {i}  # module {turn}" for i in range(40)
        )
        ctx.add({"role": "tool", "tool_call_id": f"call_{turn}", "content": body})
    return paths


def next_request(ctx: Context, clock: list[float], turn: int) -> str:
    """The request of turn ``turn`` as canonical JSON."""
    clock[0] = 1_000.0 + 600.0 * turn
    return json.dumps(ctx.openai(), sort_keys=True)


def main(argv: list[str]) -> None:
    """Dispatch on the mode; see the module docstring."""
    mode, clock = argv[0], [0.0]
    background, per_turn = mode.endswith("-bg"), mode.endswith("-turn")
    durability: Durability = "turn" if per_turn else "request"
    mode = mode.removesuffix("-bg").removesuffix("-turn")
    if mode == "run":
        ctx = _context(argv[1], clock, background=background, durability=durability)
        turns(ctx, clock, int(argv[2]))
        if per_turn:
            next_request(ctx, clock, int(argv[2]))
        assert not background or ctx.engine.jobs, "a background summary is under way"
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        time.sleep(600)
    elif mode == "next":
        ctx = _context(argv[1], clock, background=background, durability=durability)
        sys.stdout.write(next_request(ctx, clock, int(argv[2])) + "\n")
    else:
        ctx = _context(None, clock)
        paths = turns(ctx, clock, int(argv[1]))
        sys.stdout.write(json.dumps(paths) + "\n")
        sys.stdout.write(next_request(ctx, clock, int(argv[1])) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
