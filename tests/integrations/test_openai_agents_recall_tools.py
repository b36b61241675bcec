"""`CtxSession.recall_tools()`: the agent gets back what a stub names, and finds a result by a word."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "ctxrules.integrations.openai_agents",
    reason="the agents extra is not installed",
    exc_type=ImportError,
)

import asyncio
from itertools import pairwise
from typing import Any

from agents import (
    Agent,
    Model,
    RunConfig,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from agents_items import replied
from recall_text import HANDLE, original

from ctxrules.integrations.openai_agents import CtxSession
from ctxrules.store import SqliteStore
from ctxrules.tokens import HeuristicCounter

set_tracing_disabled(True)

WINDOW = 16_000
READS = 24


@function_tool
def read_file(n: int) -> str:
    """Read a file."""
    return original(n)


class Recaller(Model):
    """One read a run; in the last run it recalls the first stub's handle, then searches."""

    def __init__(self) -> None:
        self.inputs: list[list[dict[str, Any]]] = []
        self.tools: list[str] = []
        self.recalled = ""
        self.instructions: list[str | None] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        names = ("system_instructions", "input", "model_settings", "tools")
        given = dict(zip(names, args, strict=False)) | kwargs
        items, tools = given["input"], given["tools"]
        self.inputs.append([dict(i) for i in items])
        self.instructions.append(given["system_instructions"])
        self.tools = [t.name for t in tools]
        last = items[-1]
        reads = sum(1 for i in items if i.get("name") == "read_file")
        if last.get("role") == "user" and last["content"] == "recall":
            outputs = [
                str(i.get("output")) for i in items if i.get("type") == "function_call_output"
            ]
            self.recalled = next(m.group(1) for o in outputs if (m := HANDLE.search(o)))
            return replied(("r1", "recall", {"handle": self.recalled}))
        if last.get("call_id") == "r1":
            return replied(("s1", "search_history", {"query": "value_3_17"}))
        if last.get("role") == "user":
            n = len(self.inputs)
            return replied((f"read_{n}", "read_file", {"n": n}))
        return replied(text=f"done {reads}")

    def stream_response(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise NotImplementedError


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    """``READS`` runs that read a file each, then one that recalls and searches."""
    store = SqliteStore.open(str(tmp_path_factory.mktemp("s") / "a.sqlite")).unwrap()
    seconds = iter(float(t) for t in range(0, 10**6, 5))
    session = CtxSession(
        "r",
        window=WINDOW,
        store=store,
        system="Work.",
        tokenizer=HeuristicCounter(),
        clock=lambda: next(seconds),
    )
    model = Recaller()
    agent = Agent(
        name="reader",
        instructions="Work.",
        model=model,
        tools=[read_file, *session.recall_tools()],
    )
    config = RunConfig(call_model_input_filter=session.input_filter())

    async def go() -> list[dict[str, object]]:
        for run in range(READS):
            await Runner.run(agent, f"Task {run}.", session=session, run_config=config)
        await Runner.run(agent, "recall", session=session, run_config=config)
        return session.items()

    items = asyncio.run(go())
    yield model, items
    store.close()


def _output(items: list[dict[str, object]], call_id: str) -> str:
    return next(str(i["output"]) for i in items if i.get("call_id") == call_id and "output" in i)


def test_the_agent_is_offered_the_recall_tools(run) -> None:
    """The session's tools are the agent's, beside its own."""
    model, _ = run
    assert set(model.tools) == {"read_file", "recall", "search_history"}


def test_recall_brings_back_the_original_a_stub_names(run) -> None:
    """The handle in a stub the model was sent gives back that read's original, a page of it."""
    model, items = run
    answer = _output(items, "r1")
    assert model.recalled in answer
    stubbed = next(
        i["call_id"]
        for i in model.inputs[-3]
        if i.get("type") == "function_call_output" and model.recalled in str(i.get("output"))
    )
    body = answer.split("\n", 1)[1]
    assert len(body) >= 1_000
    assert original(int(str(stubbed).split("_")[1])).startswith(body)


def test_search_history_finds_a_result_by_a_word_it_held(run) -> None:
    """A word only one read held leads to that read's handle."""
    model, items = run
    answer = _output(items, "s1")
    # The snippet of the third call's read (the first call of the second run), by its handle.
    assert "module_3 line 17: value_3_17" in answer.replace("[", "").replace("]", "")
    stub = _output(model.inputs[-3], "read_3")
    shown = HANDLE.search(stub)
    assert shown is not None
    assert answer.startswith(shown.group(1))


def test_the_instructions_end_with_a_receipt_once_something_is_shortened(run) -> None:
    """The agent offers recall: its instructions go out as written, then with the receipt."""
    model, _ = run
    assert model.instructions[0] == "Work."
    last = str(model.instructions[-1])
    assert last.startswith("Work.\n\n[Context note: ")
    assert "call recall" in last
    # Renewed at batch points only: a call that extends the one before keeps the same text.
    calls = list(zip(model.inputs, model.instructions, strict=True))
    extended = [(a, b) for a, b in pairwise(calls) if b[0][: len(a[0])] == a[0]]
    assert len(extended) >= len(calls) // 2
    assert all(after[1] == before[1] for before, after in extended)
