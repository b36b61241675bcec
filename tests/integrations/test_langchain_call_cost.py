"""A model call through the middleware costs what is new: each message is read and converted once."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip(
    "ctxrules.integrations.langchain",
    reason="the langchain extra is not installed",
    exc_type=ImportError,
)

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langchain_fakes import ScriptedModel
from langgraph.checkpoint.memory import InMemorySaver

from ctxrules.integrations.langchain import CtxrulesMiddleware, to_langchain
from ctxrules.integrations.langchain import messages as messages_module
from ctxrules.integrations.langchain import middleware as middleware_module
from ctxrules.tokens import HeuristicCounter

CALLS = 60


class Reader(ScriptedModel):
    """Reads a file on every call."""

    def reply(self, messages: list[BaseMessage]) -> AIMessage:  # noqa: ARG002 - by count
        n = len(self.log)
        if n >= CALLS:
            return AIMessage("All read.")
        return AIMessage(
            f"Reading {n}.", tool_calls=[{"name": "read", "args": {"n": n}, "id": f"c{n}"}]
        )


@tool
def read(n: int) -> str:
    """Read a file."""
    return f"def handler_{n}(request):\n    return route(request, '/v1/{n}')\n" * 5


def test_each_message_is_converted_and_keyed_about_once(monkeypatch) -> None:
    """Over a long loop the middleware converts and keys each message about once, not every call.

    Before, every call converted the whole context to LangChain objects again (about 20 µs
    a message: 15 ms a call at 1,000 messages) and keyed every message of the state.
    """
    made: list[int] = []
    keyed: list[int] = []
    real_make, real_key = messages_module.from_openai_message, middleware_module.key_of

    def making(params):  # type: ignore[no-untyped-def]
        made.append(1)
        return real_make(params)

    def keying(message):  # type: ignore[no-untyped-def]
        keyed.append(1)
        return real_key(message)

    monkeypatch.setattr(messages_module, "from_openai_message", making)
    monkeypatch.setattr(middleware_module, "key_of", keying)
    model = Reader()
    seconds = iter(float(t) for t in range(0, 10**6, 5))
    middleware = CtxrulesMiddleware(
        window=128_000, tokenizer=HeuristicCounter(), clock=lambda: next(seconds)
    )
    agent = create_agent(model, tools=[read], middleware=[middleware], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}, "recursion_limit": 4 * CALLS}
    agent.invoke({"messages": [HumanMessage("Read them all.")]}, config)
    assert len(model.log) == CALLS
    sent = len(model.log[-1])
    assert sent >= 2 * CALLS - 1
    # About once each: a call converts its new messages (an assistant message that merges
    # with the next is converted again), never the whole context.
    assert len(made) <= 2 * sent, (len(made), sent)
    assert len(keyed) <= 2 * sent, (len(keyed), sent)
    # What is sent is what `to_langchain` makes of the same context.
    last = middleware.last_prep
    assert last is not None
    expected = [(m.type, m.text) for m in to_langchain(last.messages)]
    assert [(m.type, m.text) for m in model.log[-1]] == expected
