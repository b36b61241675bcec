"""The story `ctxrules demo` tells: an agent reads files, the default spec tightens what it sent.

Two contexts get the same turns: one runs the default spec, the other no rules (the naive
resend). A fake model asks for one file per turn; the table shows each request's tokens,
what the rules changed, and the saving.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

import attrs

from ctxrules.engine.context import Context
from ctxrules.rules import Pipeline

FILES = (
    "README.md",
    "src/parser.py",
    "src/lexer.py",
    "tests/test_parser.py",
    "src/cli.py",
    "src/errors.py",
    "docs/usage.md",
    "CHANGELOG.md",
    "src/config.py",
    "tests/test_cli.py",
    "src/utils.py",
    "tests/test_lexer.py",
)


@attrs.frozen
class DemoTurn:
    """One request of the demo: its tokens under the spec and naive, and what rules changed."""

    index: int
    sent: int
    naive: int
    changed: dict[str, int]


def _file_text(path: str) -> str:
    # Long enough that the single-result cap and the aging rules have something to do.
    lines = (f"{path}:{n}: def handler_{n}(event): return process(event, {n})" for n in range(90))
    return "\n".join(lines)


def _reply(turn: int) -> dict[str, object]:
    done = turn >= len(FILES)
    message: dict[str, object] = {"role": "assistant", "content": f"Step {turn + 1}."}
    if not done:
        arguments = json.dumps({"path": FILES[turn]})
        message["tool_calls"] = [
            {
                "id": f"call_{turn}",
                "type": "function",
                "function": {"name": "read_file", "arguments": arguments},
            }
        ]
    return {"choices": [{"message": message}], "usage": {"prompt_tokens": 0}}


def run_demo(minutes_per_turn: float = 5.0) -> Iterator[tuple[DemoTurn, Context]]:
    """Each turn of the demo, with the context that ran the default spec."""
    clock = [0.0]
    contexts = [
        Context(spec, model="gpt-4o", system="You are a coding agent.", clock=lambda: clock[0])
        for spec in ("default", Pipeline())
    ]
    for ctx in contexts:
        ctx.add({"role": "user", "content": "Read the project and explain how parsing works."})
    before: dict[str, int] = {}
    for turn in range(len(FILES) + 1):
        clock[0] = turn * minutes_per_turn * 60
        for ctx in contexts:
            ctx.openai()
        tight, naive = (ctx.last for ctx in contexts)
        assert tight is not None  # noqa: S101 - openai() just prepared it
        assert naive is not None  # noqa: S101 - same
        # What tightened since the last request (a new item counts if it came in tightened),
        # by the rule that did it.
        changed = Counter(
            i.reason
            for i in tight.commit.items
            if i.state.value != "full" and before.get(i.source_node_id, -1) != i.tokens
        )
        before = {i.source_node_id: i.tokens for i in tight.commit.items}
        yield DemoTurn(turn, tight.request_tokens, naive.request_tokens, dict(changed)), contexts[0]
        for ctx in contexts:
            reply = ctx.record(_reply(turn))
            for call in reply.tool_calls:
                path = call.arguments.get("path") if isinstance(call.arguments, dict) else None
                ctx.add_tool_result(call.id, _file_text(str(path)))
