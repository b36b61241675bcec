"""A LangChain agent loop keeps the cached prefix: most model calls extend the call before.

The middleware runs the built-in default spec, batching included, as `Context` does. It
once ran rules of its own with no batching: every call aged a result or two and rewrote
the provider's cached prefix, and a 160-call loop extended the previous call 33-42 % of
the time against the 85 % the replay promises.
"""

from __future__ import annotations

import pytest

pytest.importorskip(
    "ctxrules.integrations.langchain",
    reason="the langchain extra is not installed",
    exc_type=ImportError,
)

from itertools import pairwise
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langchain_fakes import ScriptedModel
from langgraph.checkpoint.memory import InMemorySaver

from ctxrules import Context
from ctxrules.integrations.langchain import CtxrulesMiddleware
from ctxrules.tokens import HeuristicCounter

WINDOW = 32_000
#: Tool outputs from a line to a large file (the cap cuts the largest on arrival).
SIZES = (40, 600, 3_000, 12_000, 40_000)
TASKS = 25
CALLS_PER_TASK = 4


class Worker(ScriptedModel):
    """Reads ``CALLS_PER_TASK - 1`` files per task, then reports."""

    def reply(self, messages: list[BaseMessage]) -> AIMessage:  # noqa: ARG002 - by count
        n = len(self.log)
        if n % CALLS_PER_TASK == 0:
            return AIMessage(f"Task done; src/mod{n}.py is fixed.")
        call = {"name": "read_file", "args": {"n": n}, "id": f"call_{n}"}
        return AIMessage(f"Reading file {n}.", tool_calls=[call])


@tool
def read_file(n: int) -> str:
    """Read a file."""
    line = f"def handler_{n}(request): return route(request, '/v1/items/{n}')\n"
    size = SIZES[n % len(SIZES)]
    return (line * (size // len(line) + 1))[:size]


def _key(message: BaseMessage) -> tuple[object, ...]:
    return (message.type, message.content, getattr(message, "tool_calls", None))


def test_a_long_agent_loop_extends_the_cached_prefix() -> None:
    """At least 85 % of the model calls start with the whole previous call (as the replay's)."""
    model = Worker()
    seconds = iter(float(t) for t in range(0, 10**6, 5))
    middleware = CtxrulesMiddleware(
        window=WINDOW, tokenizer=HeuristicCounter(), clock=lambda: next(seconds)
    )
    agent = create_agent(
        model, tools=[read_file], middleware=[middleware], checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "loop"}, "recursion_limit": 100}
    for task in range(TASKS):
        agent.invoke({"messages": [HumanMessage(f"Task {task}: fix the module.")]}, config)
    requests = [[_key(m) for m in messages] for messages in model.log]
    assert len(requests) == TASKS * CALLS_PER_TASK
    extends = sum(now[: len(before)] == before for before, now in pairwise(requests))
    assert extends >= 0.85 * (len(requests) - 1), f"{extends} of {len(requests) - 1} extend"
    # The loop did age results: the rules ran, in batches.
    sent = [m for messages in model.log[-8:] for m in messages]
    assert any("[recall h:" in str(m.content) for m in sent)
    # Not offered recall, the model is told of no receipt it could not act on.
    assert not any("[Context note:" in str(m.content) for m in sent)


def test_the_middleware_runs_the_spec_context_runs() -> None:
    """One default for every way in: the middleware's rules are `Context`'s (batching too)."""
    middleware = CtxrulesMiddleware(window=WINDOW, tokenizer=HeuristicCounter())
    context = Context("default", model="gpt-4o", window=WINDOW, tokenizer=HeuristicCounter())
    assert middleware.engine.pipeline.version == context.engine.pipeline.version
    assert middleware.engine.pipeline.batching is not None
