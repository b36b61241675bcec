"""The middleware drives a real ``create_agent`` agent with tools on a fake model, offline."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "ctxrules.integrations.langchain",
    reason="the langchain extra is not installed",
    exc_type=ImportError,
)

import asyncio
import json
from pathlib import Path
from typing import Any

import pg_server
from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from ctxrules.check import protocol_valid
from ctxrules.dag import Session
from ctxrules.integrations.langchain import CtxrulesMiddleware, from_langchain
from ctxrules.render import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock, count_messages
from ctxrules.store import SqliteStore, open_store
from ctxrules.store.protocol import Store
from ctxrules.tokens import HeuristicCounter, tools_schema_tokens


def neutral(message: BaseMessage) -> Message:
    """A received LangChain message in ctxrules's neutral form, rebuilt here independently."""
    if isinstance(message, ToolMessage):
        return Message("tool", (ToolResultBlock(message.tool_call_id, message.text),))
    blocks: list[Block] = [TextBlock(message.text)] if message.text else []
    if isinstance(message, AIMessage):
        blocks += [
            ToolUseBlock(c["id"] or "", c["name"], json.dumps(c["args"]))
            for c in message.tool_calls
        ]
    role = {"ai": "assistant", "human": "user", "system": "system"}[message.type]
    return Message(role, tuple(blocks))


def received_tokens(messages: list[BaseMessage], tools: list[dict[str, Any]]) -> int:
    """What a request weighs by the one ruler: its messages and its tool schemas."""
    counter = HeuristicCounter()
    sent = tuple(neutral(m) for m in messages)
    return count_messages(sent, counter) + tools_schema_tokens(tools, counter)


class ToolCallingFake(BaseChatModel):
    """Calls ``read_file`` ``calls`` times, one call per turn, then answers; summarises on request.

    Each request is logged in ``log`` as (messages, tools); the usage it reports is the
    request's weight by `received_tokens`.
    """

    calls: int = 120
    log: list[tuple[list[BaseMessage], list[dict[str, Any]]]] = Field(default_factory=list)
    summaries: int = 0
    #: Every call under this id, as servers that number each reply's calls from 0 do.
    same_id: str = ""

    @property
    def _llm_type(self) -> str:
        return "tool-calling-fake"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,  # noqa: ARG002 - the interface's signature
        run_manager: CallbackManagerForLLMRun | None = None,  # noqa: ARG002 - see above
        **kwargs: Any,
    ) -> ChatResult:
        tools = kwargs.get("tools")
        if tools is None:  # the middleware's summarizer calls the bare model
            self.summaries += 1
            reply = AIMessage(f"## Goal\nread the files (summary {self.summaries})")
            return ChatResult(generations=[ChatGeneration(message=reply)])
        self.log.append((list(messages), tools))
        turn = len(self.log)
        usage = {
            "input_tokens": received_tokens(messages, tools),
            "output_tokens": 10,
            "total_tokens": received_tokens(messages, tools) + 10,
        }
        if turn <= self.calls:
            reply = AIMessage(
                f"Reading part {turn}.",
                tool_calls=[
                    {
                        "name": "read_file",
                        "args": {"part": turn},
                        "id": self.same_id or f"call_{turn}",
                    }
                ],
                usage_metadata=usage,
            )
        else:
            reply = AIMessage("All parts read.", usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=reply)])


WINDOW = 3_000
CALLS = 110


@tool
def read_file(part: int) -> str:
    """Read one part of the big file."""
    return f"part {part}: " + " ".join(f"line{part}_{i} holds some text" for i in range(40))


def _conversation(session: Session) -> list[tuple[object, ...]]:
    """The branch as (role, text) rows, each tool call as (name, call id, result, status)."""
    rows: list[tuple[object, ...]] = []
    for call in session.branch():
        rows.append((call.role.value, call.output_value()))
        for callee in session.graph.callees_of(call.id):
            tool_call = session.graph.nodes[callee]
            rows.append(
                (
                    tool_call.name,
                    tool_call.metadata.get("tool_call_id"),
                    tool_call.output_value(),
                    tool_call.status.value,
                )
            )
    return rows


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    """One agent run of more than a hundred model calls at a 3,000-token window."""
    path = tmp_path_factory.mktemp("store") / "ctx.sqlite"
    store = SqliteStore.open(str(path), synchronous="NORMAL").unwrap()
    model = ToolCallingFake(calls=CALLS)
    clock = iter(float(t) for t in range(0, 10**6, 7))
    middleware = CtxrulesMiddleware(
        window=WINDOW, store=store, tokenizer=HeuristicCounter(), clock=lambda: next(clock)
    )
    agent = create_agent(
        model, tools=[read_file], system_prompt="You read files.", middleware=[middleware]
    )
    state = agent.invoke(
        {"messages": [HumanMessage("Read every part of the big file.")]},
        {"configurable": {"thread_id": "t1"}, "recursion_limit": 1_000},
    )
    yield model, middleware, store, state["messages"]
    store.close()


def test_the_agent_ran_over_a_hundred_model_calls_with_compaction(run) -> None:
    """Every read_file call ran, the agent answered, and history was folded on the way."""
    model, middleware, _, messages = run
    assert len(model.log) == CALLS + 1 >= 100
    assert messages[-1].text == "All parts read."
    assert sum(isinstance(m, ToolMessage) for m in messages) == CALLS
    assert model.summaries > 0
    assert middleware.engine.states["t1"].usage.source == "provider"


def test_no_request_is_over_the_window(run) -> None:
    """Counted independently from what the model received, every request fits the window."""
    model, *_ = run
    weights = [received_tokens(messages, tools) for messages, tools in model.log]
    assert max(weights) <= WINDOW
    # Without ctxrules the last request would carry the whole history.
    _, _, _, messages = run
    assert received_tokens(messages, model.log[-1][1]) > 5 * WINDOW


def test_tool_pairs_are_intact_in_every_request(run) -> None:
    """Every tool result the model read has its call right before it, and every call its result."""
    model, *_ = run
    for messages, _ in model.log:
        assert protocol_valid(tuple(neutral(m) for m in messages)) == []
        calls = {c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
        results = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
        assert calls == results


def test_the_stored_session_matches_what_the_agent_did(run) -> None:
    """The store's session, reloaded, is the agent's conversation: texts, tool ids and results."""
    _, _, store, messages = run
    stored = store.load_session("t1").unwrap()
    expected = from_langchain(messages).unwrap()
    assert _conversation(stored) == _conversation(expected)
    assert len(store.commits_for("t1").unwrap()) >= CALLS


def test_a_failing_store_warns_and_the_agent_still_answers(tmp_path) -> None:
    """Ctxrules never breaks the agent: a closed store is a warning, the request passes through."""
    store = SqliteStore.open(str(tmp_path / "closed.sqlite")).unwrap()
    store.close()
    model = ToolCallingFake(calls=1)
    middleware = CtxrulesMiddleware(window=WINDOW, store=store, tokenizer=HeuristicCounter())
    agent = create_agent(model, tools=[read_file], middleware=[middleware])
    with pytest.warns(UserWarning, match="ctxrules"):
        state = agent.invoke({"messages": [HumanMessage("Read part one.")]})
    assert state["messages"][-1].text == "All parts read."
    assert middleware.last_prep is None


def test_the_async_agent_is_served_the_same_way(tmp_path) -> None:
    """Ainvoke goes through awrap_model_call: the context is prepared and the session stored."""
    store = SqliteStore.open(str(tmp_path / "a.sqlite"), synchronous="NORMAL").unwrap()
    model = ToolCallingFake(calls=3)
    middleware = CtxrulesMiddleware(window=WINDOW, store=store, tokenizer=HeuristicCounter())
    agent = create_agent(model, tools=[read_file], middleware=[middleware])
    state = asyncio.run(
        agent.ainvoke(
            {"messages": [HumanMessage("Read three parts.")]}, {"configurable": {"thread_id": "a"}}
        )
    )
    assert middleware.last_prep is not None
    assert _conversation(store.load_session("a").unwrap()) == _conversation(
        from_langchain(state["messages"]).unwrap()
    )
    store.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_new_middleware_on_the_store_goes_on_as_the_old_one_would(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A restart after compaction: the next request equals the uninterrupted process's.

    Before, the middleware stored nodes but not the engine's commits and usage, so a new
    process folded the history again and sent a different request (a broken cache).
    """
    if backend == "sqlite":
        urls = [f"sqlite:///{tmp_path / name}.sqlite" for name in "ab"]
    else:
        server = request.getfixturevalue("postgres")
        urls = [pg_server.fresh_schema_url(server) for _ in "ab"]
    runs = []
    for url in urls:
        store = open_store(url).unwrap()
        clock = iter(float(t) for t in range(0, 10**6, 7))
        model = ToolCallingFake(calls=40)
        runs.append((store, clock, model, _middleware_agent(store, clock, model)))
    first = HumanMessage("Read forty parts.")
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 1_000}
    states = [agent.invoke({"messages": [first]}, config) for *_, agent in runs]
    (_, _, going, _), (store, clock, stopped, _) = runs
    assert going.log == stopped.log
    assert any("Summary" in m.text for m in going.log[-1][0]), "compacted before the restart"
    # The second process stops; a new one opens the same store.
    store.close()
    store = open_store(urls[1]).unwrap()
    runs[1] = (store, clock, stopped, runs[1][3])
    restarted = _middleware_agent(store, clock, stopped)
    more = HumanMessage("And now?")
    runs[0][3].invoke({"messages": [*states[0]["messages"], more]}, config)
    restarted.invoke({"messages": [*states[1]["messages"], more]}, config)
    assert going.log[-1] == stopped.log[-1]
    for store, *_ in runs:
        store.close()


def _middleware_agent(store: Store, clock: Any, model: ToolCallingFake) -> Any:
    """An agent whose middleware keeps the session in ``store`` (a structural summarizer)."""
    middleware = CtxrulesMiddleware(
        window=WINDOW,
        store=store,
        tokenizer=HeuristicCounter(),
        clock=lambda: next(clock),
        summarizer=lambda prompt: f"## Goal\nread the files ({len(prompt)} messages)",
    )
    return create_agent(
        model, tools=[read_file], system_prompt="You read files.", middleware=[middleware]
    )


def test_a_model_reusing_one_call_id_still_sees_every_call_as_a_call() -> None:
    """A model that names every call ``call_0``: each request sends them all, paired, as calls."""
    model = ToolCallingFake(calls=8, same_id="call_0")
    middleware = CtxrulesMiddleware(window=128_000, tokenizer=HeuristicCounter())
    agent = create_agent(model, tools=[read_file], middleware=[middleware])
    agent.invoke({"messages": [HumanMessage("Read the parts.")]}, {"recursion_limit": 100})
    for turn, (messages, _) in enumerate(model.log):
        assert protocol_valid(tuple(neutral(m) for m in messages)) == []
        calls = [c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
        assert len(calls) == len(set(calls)) == turn
        assert not any("[tool call" in m.text for m in messages)
