"""Anthropic extended thinking through the middleware, checked on what ChatAnthropic sends.

A ``create_agent`` agent on ``ChatAnthropic`` with thinking enabled talks to an in-process
Messages API that keeps `FakeAnthropic`'s rules (a tool loop's assistant turn starts with
its signed thinking block). The middleware once dropped the blocks: the second model call
was refused (400).
"""

from __future__ import annotations

import pytest

pytest.importorskip(
    "ctxrules.integrations.langchain",
    reason="the langchain extra is not installed",
    exc_type=ImportError,
)
pytest.importorskip("langchain_anthropic", reason="langchain-anthropic is not installed")

import json
from itertools import pairwise
from typing import Any

import anthropic
import httpx2
from langchain.agents import create_agent
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ctxrules.integrations.langchain import CtxrulesMiddleware, from_langchain, to_langchain
from ctxrules.integrations.langchain.messages import reasoning_of
from ctxrules.render import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    to_openai,
)
from ctxrules.render.item import THINKING_KEY
from ctxrules.testing.fake_sdk import _check_breakpoints, _check_reasoning, _signature
from ctxrules.tokens import HeuristicCounter

WINDOW = 8_000
CALLS = 20
#: A reply's thinking: long enough that a few of them fill a good part of the window.
THOUGHT = "I should read the next files, then compare their handlers. " * 8


class MessagesAPI:
    """The Messages API in process: checks each request as `FakeAnthropic` does, answers by count.

    Each reply starts with a signed thinking block and makes 1 to 3 tool calls (by turn),
    until ``CALLS`` replies; then it answers in text. Refused requests are answered 400.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.refused: list[str] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        thinking = body.get("thinking", {}).get("type") == "enabled"
        try:
            _check_reasoning(body["messages"], thinking=thinking)
            _check_breakpoints(body)
        except ValueError as refusal:
            self.refused.append(str(refusal))
            error = {"type": "invalid_request_error", "message": str(refusal)}
            return httpx2.Response(400, json={"type": "error", "error": error})
        self.requests.append(body)
        turn = len(self.requests)
        content: list[dict[str, object]] = []
        if thinking:
            thought = f"Turn {turn}. {THOUGHT}"
            content.append(
                {"type": "thinking", "thinking": thought, "signature": _signature(thought)}
            )
        if turn > CALLS:
            content.append({"type": "text", "text": "All files read."})
        else:
            content.append({"type": "text", "text": f"Reading batch {turn}."})
            content += [
                {
                    "type": "tool_use",
                    "id": f"toolu_{turn}_{n}",
                    "name": "read_file",
                    "input": {"n": turn * 10 + n},
                }
                for n in range(1 + turn % 3)
            ]
        return httpx2.Response(
            200,
            json={
                "id": f"msg_{turn}",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": content,
                "stop_reason": "end_turn" if turn > CALLS else "tool_use",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": len(json.dumps(body["messages"])) // 4,
                    "output_tokens": 50,
                },
            },
        )


@tool
def read_file(n: int) -> str:
    """Read a file."""
    return f"def handler_{n}(request):\n    return route(request, '/v1/items/{n}')\n" * 12


def chat_model(api: MessagesAPI) -> ChatAnthropic:
    """``ChatAnthropic`` with thinking enabled, its HTTP calls answered by ``api``."""
    model = ChatAnthropic(  # type: ignore[call-arg]
        model="claude-sonnet-4-5",
        thinking={"type": "enabled", "budget_tokens": 2048},
        max_tokens=4096,
        api_key="test-key",
    )
    client = httpx2.Client(transport=httpx2.MockTransport(api))
    # ChatAnthropic builds its SDK client once (a cached property): this one never leaves the process.
    model.__dict__["_client"] = anthropic.Anthropic(
        api_key="test-key", http_client=client, max_retries=0
    )
    return model


@pytest.fixture(scope="module")
def run() -> tuple[MessagesAPI, CtxrulesMiddleware, list[Any]]:
    """The agent run once for the module: the API it talked to, its middleware, its messages."""
    api = MessagesAPI()
    seconds = iter(float(t) for t in range(0, 10**6, 5))
    middleware = CtxrulesMiddleware(
        window=WINDOW,
        tokenizer=HeuristicCounter(),
        clock=lambda: next(seconds),
        summarizer=lambda prompt: "## Goal\nRead every file.",  # noqa: ARG005 - a fixed summary
        background=False,
    )
    agent = create_agent(
        chat_model(api), tools=[read_file], middleware=[middleware], checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "t"}, "recursion_limit": 10 * CALLS}
    state = agent.invoke({"messages": [HumanMessage("Read the files, batch by batch.")]}, config)
    return api, middleware, state["messages"]


def test_every_request_of_the_tool_loop_is_accepted(run) -> None:
    """All ``CALLS + 1`` model calls reach the API and none is refused (the first 400 ended the run)."""
    api, _, messages = run
    assert api.refused == []
    assert len(api.requests) == CALLS + 1
    assert messages[-1].text == "All files read."


def test_each_reply_goes_back_as_one_turn_led_by_its_thinking(run) -> None:
    """The last assistant turn of each request is the reply being continued: thinking, text, all its calls."""
    api, _, _ = run
    for turn, body in enumerate(api.requests[1:], start=1):
        reply, results = body["messages"][-2:]
        assert reply["role"] == "assistant"
        assert [b["type"] for b in reply["content"]] == [
            "thinking",
            "text",
            *["tool_use"] * (1 + turn % 3),
        ], turn
        assert reply["content"][0]["thinking"].startswith(f"Turn {turn}. ")
        assert [b["type"] for b in results["content"]] == ["tool_result"] * (1 + turn % 3)


def test_the_window_forced_aging_and_compaction(run) -> None:
    """At 8k old results were aged (a request smaller than the one before) and history compacted."""
    api, _, messages = run
    sizes = [len(json.dumps(body["messages"])) for body in api.requests]
    assert any(after < before for before, after in pairwise(sizes))
    assert any("[Summary] " in json.dumps(body["messages"]) for body in api.requests)
    assert len(api.requests[-1]["messages"]) < len(messages) - 10


def test_the_blocks_are_kept_verbatim_in_node_metadata() -> None:
    """An AIMessage as ChatAnthropic returns it keeps its reasoning blocks (and its joined text) on the node."""
    blocks = [
        {"type": "thinking", "thinking": "Read a.py first.", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "EqQBCkgIARABGAIiQ"},
    ]
    reply = AIMessage(
        [*blocks, {"type": "text", "text": "Reading."}],
        id="a1",
        tool_calls=[{"name": "read_file", "args": {"n": 1}, "id": "toolu_1"}],
    )
    session = from_langchain([HumanMessage("Go.", id="h1"), reply]).unwrap()
    node = session.graph.nodes["a1"]
    assert node.output == "Reading."
    assert [dict(b) for b in node.metadata[THINKING_KEY]] == blocks
    assert node.metadata["reasoning"] == "Read a.py first."


def _calls(*ids: str) -> list[Message]:
    out: list[Message] = []
    for call_id in ids:
        out += [
            Message("assistant", (ToolUseBlock(call_id, "ls", "{}"),)),
            Message("tool", (ToolResultBlock(call_id, "a.py"),)),
        ]
    return out


def test_a_reasoning_reply_s_calls_join_and_others_stay_apart() -> None:
    """Parallel calls join only after a reasoning reply; without one each stays its own message."""
    thought = ThinkingBlock('{"signature":"s","thinking":"Hm.","type":"thinking"}', "Hm.")
    plain = [Message("user", (TextBlock("Go."),)), *_calls("c1", "c2", "c3")]
    assert [(m.type, len(getattr(m, "tool_calls", ()))) for m in to_langchain(plain)] == [
        ("human", 0),
        *[("ai", 1), ("tool", 0)] * 3,
    ]
    reasoned = [plain[0], Message("assistant", (thought, TextBlock("Listing."))), *plain[1:]]
    sent = to_langchain(reasoned)
    assert [m.type for m in sent] == ["human", "ai", "tool", "tool", "tool"]
    assert sent[1].content[0] == {"type": "thinking", "thinking": "Hm.", "signature": "s"}
    assert [c["id"] for c in sent[1].tool_calls] == ["c1", "c2", "c3"]


def test_each_assistant_message_to_openai_makes_has_its_own_reasoning() -> None:
    """`reasoning_of` gives one entry per assistant message `to_openai` makes, in the tricky shapes."""
    thought = ThinkingBlock('{"data":"x","type":"redacted_thinking"}', "x")
    shapes = [
        # A summary's text merges with the reasoning reply after it.
        [
            Message("assistant", (TextBlock("[Summary] s"),)),
            Message("assistant", (thought,)),
            *_calls("c1"),
        ],
        # A reasoning reply with nothing else to say is dropped, with its blocks.
        [
            Message("user", (TextBlock("Go."),)),
            Message("assistant", (thought,)),
            Message("user", (TextBlock("?"),)),
        ],
        # An orphaned call becomes text in its own assistant message.
        [
            Message("assistant", (thought, ToolUseBlock("c9", "ls", "{}"))),
            Message("user", (TextBlock("Go."),)),
        ],
    ]
    expected = [[(thought,)], [], [(thought,)]]
    for shape, reasoning in zip(shapes, expected, strict=True):
        assistants = [m for m in to_openai(shape) if m["role"] == "assistant"]
        assert reasoning_of(shape) == reasoning
        assert len(assistants) == len(reasoning)
