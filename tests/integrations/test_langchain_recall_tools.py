"""With ``recall=True`` the middleware gives the agent ``recall`` and ``search_history``.

A stub names its original's handle; the agent calls ``recall`` with it and reads the
original back, whole or in pages; ``search_history`` finds a result by a word it held.
"""

from __future__ import annotations

from itertools import pairwise

import pytest

pytest.importorskip(
    "ctxrules.integrations.langchain",
    reason="the langchain extra is not installed",
    exc_type=ImportError,
)


from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_fakes import ScriptedModel
from langgraph.checkpoint.memory import InMemorySaver
from recall_text import HANDLE, original

from ctxrules.integrations.langchain import CtxrulesMiddleware
from ctxrules.store import SqliteStore
from ctxrules.tokens import HeuristicCounter

WINDOW = 16_000
READS = 30


@tool
def read_file(n: int) -> str:
    """Read a file."""
    return original(n)


class Recaller(ScriptedModel):
    """Reads ``READS`` files, then recalls the first stub's handle it was sent, then searches."""

    recalled: str = ""

    def reply(self, messages: list[BaseMessage]) -> AIMessage:
        n = len(self.log)
        if n <= READS:
            call = {"name": "read_file", "args": {"n": n}, "id": f"read_{n}"}
        elif n == READS + 1:
            found = [HANDLE.search(str(m.content)) for m in messages if isinstance(m, ToolMessage)]
            self.recalled = next(m.group(1) for m in found if m is not None)
            call = {"name": "recall", "args": {"handle": self.recalled}, "id": "recall_1"}
        elif n == READS + 2:
            call = {"name": "search_history", "args": {"query": "value_2_17"}, "id": "search_1"}
        else:
            return AIMessage("All read.")
        return AIMessage(f"step {n}", tool_calls=[call])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    """One agent run with the recall tools, on a stored session."""
    store = SqliteStore.open(str(tmp_path_factory.mktemp("s") / "r.sqlite")).unwrap()
    model = Recaller()
    seconds = iter(float(t) for t in range(0, 10**6, 5))
    middleware = CtxrulesMiddleware(
        window=WINDOW,
        store=store,
        tokenizer=HeuristicCounter(),
        clock=lambda: next(seconds),
        recall=True,
    )
    agent = create_agent(
        model, tools=[read_file], middleware=[middleware], checkpointer=InMemorySaver()
    )
    state = agent.invoke(
        {"messages": [HumanMessage("Read the files.")]},
        {"configurable": {"thread_id": "r"}, "recursion_limit": 200},
    )
    yield model, state["messages"]
    store.close()


def _result(messages: list[BaseMessage], call_id: str) -> str:
    return next(str(m.content) for m in messages if getattr(m, "tool_call_id", "") == call_id)


def test_the_agent_is_offered_the_recall_tools(run) -> None:
    """The middleware's tools are the agent's, beside its own."""
    model, _ = run
    assert set(model.tools_seen) == {"read_file", "recall", "search_history"}


def test_recall_brings_back_the_original_a_stub_names(run) -> None:
    """The handle in a stub the model was sent gives back that result's original text."""
    model, messages = run
    answer = _result(messages, "recall_1")
    assert model.recalled in answer
    sent = model.log[READS]
    call_id = next(
        m.tool_call_id
        for m in sent
        if isinstance(m, ToolMessage) and model.recalled in str(m.content)
    )
    source = original(int(call_id.split("_")[1]))
    # A page of the original, as the tool wrote it (the answer fits under the cap).
    body = answer.split("\n", 1)[1]
    assert len(body) >= 1_000
    assert source.startswith(body)


def test_search_history_finds_a_result_by_a_word_it_held(run) -> None:
    """A word only the second read held leads to that result's handle."""
    model, messages = run
    answer = _result(messages, "search_1")
    assert "value_2_17" in answer.replace("[", "").replace("]", "")
    # The handle is the one the second read's stub showed the model.
    stub = _result(model.log[READS], "read_2")
    shown = HANDLE.search(stub)
    assert shown is not None
    assert shown.group(1) in answer


def test_without_recall_the_agent_gets_no_extra_tools() -> None:
    """The tools are opt-in: a middleware made without ``recall`` adds none."""
    assert CtxrulesMiddleware(window=WINDOW).tools == []


def _system(sent: list[BaseMessage]) -> str:
    first = sent[0]
    return first.text if isinstance(first, SystemMessage) else ""


def test_a_model_offered_recall_reads_a_receipt_of_what_is_shortened(run) -> None:
    """Once a request shows stubs, its system message ends with a receipt naming them and recall."""
    model, _ = run
    noted = [(sent, _system(sent)) for sent in model.log]
    assert noted[0][1] == ""  # nothing is shortened yet: no receipt
    with_stubs = [
        system
        for sent, system in noted
        if any(HANDLE.search(str(m.content)) for m in sent if isinstance(m, ToolMessage))
    ]
    assert with_stubs
    last = with_stubs[-1]
    assert last.startswith("[Context note: ")
    assert "aged to a stub" in last
    assert "call recall" in last


def test_the_receipt_changes_only_where_the_cached_prefix_breaks(run) -> None:
    """A request that extends the one before keeps its system message, receipt and all."""
    model, _ = run
    extended = 0
    for before, after in pairwise(model.log):
        body, next_body = before[1:], after[1:]
        if [m.content for m in next_body[: len(body)]] == [m.content for m in body]:
            extended += 1
            assert _system(after) == _system(before)
    assert extended >= len(model.log) // 2
