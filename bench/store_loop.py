"""The agent loop the store benchmarks share: a session filled to a size, and one turn of it.

One turn is what an agent loop does per model call through `ctxrules.Context`: add the
user's message, record a response with a tool call, add the tool's result, build the
next ``openai()`` request.
"""

from __future__ import annotations

from ctxrules import Context
from ctxrules.engine.context import Durability
from ctxrules.store.protocol import Store
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import TiktokenCounter

WINDOW = 128_000


def filler(count: int) -> list[dict[str, object]]:
    """``count`` messages of earlier turns: a request, a tool call and its 0.5 kB result."""
    messages: list[dict[str, object]] = []
    turn = 0
    while len(messages) < count:
        call = {
            "id": f"b{turn}",
            "type": "function",
            "function": {"name": "read_file", "arguments": "{}"},
        }
        messages += [
            {"role": "user", "content": f"please do task {turn} " + "word " * 30},
            {"role": "assistant", "content": f"ok {turn}", "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": f"b{turn}",
                "content": f"def f{turn}():\n    return {turn}\n" * 20,
            },
        ]
        turn += 1
    return messages[:count] if count % 3 == 0 else messages


def response(turn: int) -> dict[str, object]:
    """The model's reply at ``turn``: a step of text and one tool call."""
    call = (f"c{turn}", "read_file", {"path": f"src/m{turn}.py"})
    return openai_response(turn, f"step {turn}", [call], (5_000, 0))


class Loop:
    """One session filled to a size, and the turns an agent adds to it."""

    def __init__(
        self,
        store: str | Store | None,
        size: int,
        ruler: TiktokenCounter,
        session: str = "bench",
        *,
        fill: bool = True,
        durability: Durability | None = None,
    ) -> None:
        self.url, self.size, self.ruler, self.turn = store, size, ruler, 0
        self.session, self.durability = session, durability
        if not fill:
            # A stored session resumed: later turns than any it holds (their call ids).
            self.turn = 1_000_000
        self.ctx = self.open()
        if fill:
            self.ctx.add(*filler(size))
            self.ctx.openai()

    def open(self) -> Context:
        """A `Context` on the session (a resume, when the store holds it already)."""
        return Context(
            model="gpt-4o",
            window=WINDOW,
            store=self.url,
            session=self.session,
            tokenizer=self.ruler,
            clock=lambda: 1_000.0 + self.turn,
            # None: the default a user gets.
            **({"durability": self.durability} if self.durability is not None else {}),
        )

    def one_turn(self) -> dict[str, object]:
        """A user message, a response with a tool call, its result, the next request."""
        self.turn += 1
        ctx = self.ctx
        ctx.add({"role": "user", "content": f"next step {self.turn}"})
        reply = ctx.record(response(self.turn))
        ctx.add_tool_result(reply.tool_calls[0].id, f"contents of m{self.turn}.py\n" * 50)
        return ctx.openai()
