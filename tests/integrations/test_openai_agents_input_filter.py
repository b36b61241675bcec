"""`CtxInputFilter` under the real Agents SDK ``Runner``: every model call of one run fits the window."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip(
    "ctxrules.integrations.openai_agents",
    reason="the agents extra is not installed",
    exc_type=ImportError,
)

from agents import (
    Agent,
    Model,
    ModelResponse,
    RunConfig,
    Runner,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from agents_items import neutral
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from ctxrules.check import protocol_valid
from ctxrules.integrations.openai_agents import (
    CtxInputFilter,
    CtxSession,
    ctxrules_input_filter,
    tool_schemas,
)
from ctxrules.render import Message, TextBlock, count_messages
from ctxrules.rules import Pipeline
from ctxrules.tokens import allocate, default_tokenizer, tools_schema_tokens

WINDOW = 32_000
READS = 8
INSTRUCTIONS = "You read source files and explain them."
TOKENIZER = default_tokenizer()

set_tracing_disabled(True)


def source(part: int) -> str:
    """A large tool output (about 40,000 characters, some 10,000 tokens): one file's text."""
    lines = (
        f"{part:02d}.{i:04d}  def handler_{part}_{i}(request, retries={i % 7}):  "
        f"return dispatch(request, route='/v{part}/items/{i}')  # owner team-{i % 13}"
        for i in range(400)
    )
    return "\n".join(lines)


@function_tool
def read_file(part: int) -> str:
    """Read one part of the repository."""
    return source(part)


class Reader(Model):
    """Reads ``READS`` parts one call at a time, then answers; logs every input it was given."""

    def __init__(self) -> None:
        self.inputs: list[list[Any]] = []
        self.reads = 0

    async def get_response(self, system_instructions, input, *args: Any, **kwargs: Any):  # noqa: A002, ARG002 - the Model interface
        items = [input] if isinstance(input, str) else list(input)
        self.inputs.append(items)
        if self.reads < READS:
            self.reads += 1
            output: Any = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"call_{len(self.inputs)}",
                name="read_file",
                arguments=json.dumps({"part": len(self.inputs)}),
            )
        else:
            self.reads = 0
            text = ResponseOutputText(type="output_text", text="All read.", annotations=[])
            output = ResponseOutputMessage(
                id=f"msg_{len(self.inputs)}",
                type="message",
                role="assistant",
                status="completed",
                content=[text],
            )
        return ModelResponse(output=[output], usage=Usage(requests=1), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def request_tokens(agent: Agent[Any], items: list[Any]) -> int:
    """The tokens of one model call: instructions, tool schemas and input, by the library's ruler."""
    system = (Message("system", (TextBlock(INSTRUCTIONS),)),)
    schemas = tools_schema_tokens(tool_schemas(agent), TOKENIZER)
    return count_messages((*system, *neutral(items)), TOKENIZER) + schemas


def budget() -> int:
    """The input budget of a 32k window: what is left once the answer's reserve is kept."""
    return allocate(WINDOW, 0, 0, 0).input_budget


def run(config: RunConfig | None) -> tuple[Agent[Any], Reader]:
    """One run of ``READS`` tool calls (one per model call) and a final answer."""
    model = Reader()
    agent = Agent(name="reader", instructions=INSTRUCTIONS, model=model, tools=[read_file])
    kwargs: dict[str, Any] = {"run_config": config} if config is not None else {}
    asyncio.run(Runner.run(agent, "Read the repository.", max_turns=READS + 2, **kwargs))
    return agent, model


@pytest.fixture(scope="module")
def filtered() -> tuple[Agent[Any], Reader]:
    """The run with the filter on every model call."""
    return run(RunConfig(call_model_input_filter=ctxrules_input_filter(window=WINDOW)))


def test_without_the_filter_the_run_outgrows_the_window() -> None:
    """The scenario is real: the SDK alone sends every tool output again, far past the budget."""
    agent, model = run(None)
    weights = [request_tokens(agent, items) for items in model.inputs]
    assert len(weights) == READS + 1
    assert max(weights) > 3 * budget()
    assert sum(TOKENIZER.count(source(part)) for part in range(1, READS + 1)) > WINDOW


def test_every_model_call_fits_the_input_budget(filtered) -> None:
    """Instructions, tool schemas and input of each call stay within the window's input budget."""
    agent, model = filtered
    weights = [request_tokens(agent, items) for items in model.inputs]
    assert len(weights) == READS + 1
    assert max(weights) <= budget()


def test_the_result_the_model_asked_for_is_there(filtered) -> None:
    """Each call after a tool call ends with that call's output, its head as the tool wrote it."""
    _, model = filtered
    for turn, items in enumerate(model.inputs[1:], start=1):
        last = items[-1]
        assert last["type"] == "function_call_output"
        assert last["call_id"] == f"call_{turn}"
        # Capped: the head up to the cut's marker, as the tool wrote it.
        head = str(last["output"]).split("\n…[", 1)[0]
        assert len(head) >= 500
        assert source(turn).startswith(head)
        call = items[-2]
        assert (call["type"], call["call_id"], call["name"]) == (
            "function_call",
            f"call_{turn}",
            "read_file",
        )
        assert json.loads(call["arguments"]) == {"part": turn}


def test_every_call_is_protocol_valid_and_keeps_the_task(filtered) -> None:
    """Calls and outputs stay paired in every request, and the user's task is always sent."""
    _, model = filtered
    for items in model.inputs:
        assert protocol_valid(neutral(items)) == []
        assert items[0] == {"role": "user", "content": "Read the repository."}


def test_the_filter_follows_one_run_without_starting_over() -> None:
    """Within one run each input extends the last: the filter's session holds each item once."""
    flt = ctxrules_input_filter(window=WINDOW)
    _, model = run(RunConfig(call_model_input_filter=flt))
    # The user's message, then a call and its output per read.
    assert len(flt.live.keys) == 1 + 2 * READS
    assert flt.last_prep is not None
    assert len(model.inputs) == READS + 1


def test_a_session_and_its_filter_keep_every_call_of_every_run_in_the_window() -> None:
    """With `CtxSession.input_filter`, two runs of one session: no call over the budget."""
    model = Reader()
    agent = Agent(name="reader", instructions=INSTRUCTIONS, model=model, tools=[read_file])
    session = CtxSession("s1", window=WINDOW, system=INSTRUCTIONS)
    flt = session.input_filter()
    assert isinstance(flt, CtxInputFilter)
    assert flt.engine is session.engine

    async def go() -> None:
        for _ in range(2):
            await Runner.run(
                agent,
                "Read the repository.",
                session=session,
                max_turns=READS + 2,
                run_config=RunConfig(call_model_input_filter=flt),
            )

    asyncio.run(go())
    assert len(model.inputs) == 2 * (READS + 1)
    assert max(request_tokens(agent, items) for items in model.inputs) <= budget()
    # The session still holds the whole history, every output whole.
    outputs = [i["output"] for i in session.items() if i.get("type") == "function_call_output"]
    assert len(outputs) == 2 * READS
    assert outputs[0] == source(1)


def test_without_rules_the_engine_still_fits_each_call() -> None:
    """With an empty pipeline nothing is capped: the engine cuts old history, the newest output stays whole."""
    flt = ctxrules_input_filter(window=WINDOW, pipeline=Pipeline())
    agent, model = run(RunConfig(call_model_input_filter=flt))
    assert max(request_tokens(agent, items) for items in model.inputs) <= budget()
    for turn, items in enumerate(model.inputs[1:], start=1):
        assert items[-1]["output"] == source(turn)


def test_a_bad_window_is_refused() -> None:
    """A window under one token is a ValueError that names it."""
    with pytest.raises(ValueError, match="window=0"):
        ctxrules_input_filter(window=0)
