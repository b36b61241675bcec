"""`CtxSession` under the real Agents SDK ``Runner``, with a fake model and no network."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip(
    "ctxrules.integrations.openai_agents",
    reason="the agents extra is not installed",
    exc_type=ImportError,
)

from agents import Agent, Model, Runner, function_tool, set_tracing_disabled
from agents_items import Reads, neutral

from ctxrules.check import protocol_valid
from ctxrules.integrations.openai_agents import CtxSession, entries_of
from ctxrules.render import count_messages
from ctxrules.store import SqliteStore
from ctxrules.tokens import HeuristicCounter

WINDOW = 2_000
RUNS = 30

set_tracing_disabled(True)


class ReadThenAnswer(Reads, Model):
    """Calls ``read_file`` once per run, then answers; logs every input it was given."""


@function_tool
def read_file(part: int) -> str:
    """Read one part of the big file."""
    return f"part {part}: " + " ".join(f"line{part}_{i} holds some text" for i in range(40))


class Recording(CtxSession):
    """A CtxSession that also keeps every item the SDK added, for comparison."""

    added: list[Any]

    async def add_items(self, items: list[Any]) -> None:
        self.added = [*getattr(self, "added", []), *items]
        await super().add_items(items)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):
    """Thirty runs of one session at a 2,000-token window, stored in SQLite."""
    path = str(tmp_path_factory.mktemp("store") / "ctx.sqlite")
    store = SqliteStore.open(path, synchronous="NORMAL").unwrap()
    model = ReadThenAnswer()
    agent = Agent(name="reader", instructions="You read files.", model=model, tools=[read_file])
    session = Recording(
        "s1", window=WINDOW, store=store, system=agent.instructions, tokenizer=HeuristicCounter()
    )

    async def go() -> None:
        for run in range(RUNS):
            await Runner.run(agent, f"Read part {run}.", session=session)

    asyncio.run(go())
    yield model, session, store
    store.close()


def test_every_run_used_the_session(runs) -> None:
    """Each run made two model calls; the history reached the model through get_items."""
    model, session, _ = runs
    assert len(model.inputs) == 2 * RUNS
    assert len(session.added) == 4 * RUNS  # input, call, output, answer
    assert session.last_prep is not None


def test_the_first_request_of_every_run_fits_the_window(runs) -> None:
    """What get_items handed the SDK, plus the run's new input, stays within the window."""
    model, session, _ = runs
    counter = HeuristicCounter()
    firsts = model.inputs[::2]
    weights = [count_messages(neutral(items), counter) for items in firsts]
    assert max(weights) <= WINDOW
    assert count_messages(neutral(session.items()), counter) > 3 * WINDOW


def test_tool_pairs_are_intact_in_every_request(runs) -> None:
    """Every function call the model read is answered right after it, and every output has its call."""
    model, *_ = runs
    for items in model.inputs:
        assert protocol_valid(neutral(items)) == []


def test_the_store_holds_exactly_what_the_sdk_added(runs) -> None:
    """A fresh session on the same store returns every added item, unchanged and in order."""
    _, session, store = runs
    reopened = CtxSession("s1", window=WINDOW, store=store, tokenizer=HeuristicCounter())
    kept = [item for item in session.added if entries_of([item])]
    assert reopened.items() == kept == session.items()
    assert asyncio.run(reopened.get_items(limit=3)) == kept[-3:]


def test_pop_and_clear(tmp_path) -> None:
    """pop_item takes the last item off (a tool output too); clear_session empties, durably."""
    store = SqliteStore.open(str(tmp_path / "s.sqlite"), synchronous="NORMAL").unwrap()
    session = CtxSession("p", window=WINDOW, store=store, tokenizer=HeuristicCounter())
    items = [
        {"role": "user", "content": "ls"},
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
    ]

    async def go() -> tuple[Any, ...]:
        await session.add_items(items)
        popped = await session.pop_item()
        kept, after_pop = session.items(), await session.get_items()
        await session.clear_session()
        return popped, kept, after_pop, await session.get_items(), await session.pop_item()

    popped, kept, after_pop, after_clear, pop_empty = asyncio.run(go())
    assert popped == items[-1]
    assert kept == items[:2]
    # The call lost its output, so the context sends neither side as a tool call.
    assert protocol_valid(neutral(after_pop)) == []
    assert after_clear == []
    assert pop_empty is None
    assert CtxSession("p", window=WINDOW, store=store).items() == []
    store.close()


POPPED = [
    {"role": "user", "content": "ls"},
    {"role": "assistant", "content": "Listing."},
    {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
]


def test_a_popped_tool_output_leaves_the_context() -> None:
    """After popping a tool output the context answers its call empty, under the call's own id."""
    session = CtxSession("p", window=WINDOW, tokenizer=HeuristicCounter())

    async def go() -> list[Any]:
        await session.add_items(POPPED)  # type: ignore[arg-type]
        await session.pop_item()
        return list(await session.get_items())

    # Before, the call was recorded again under a fresh id ("c1_2"), and sent so.
    assert asyncio.run(go()) == [
        *POPPED[:3],
        {"type": "function_call_output", "call_id": "c1", "output": ""},
    ]
    assert session.items() == POPPED[:3]


def test_a_tool_output_added_again_after_a_pop_pairs_with_its_call() -> None:
    """A popped output replaced by another: history and context pair it with its call by its id."""
    session = CtxSession("p", window=WINDOW, tokenizer=HeuristicCounter())
    answer = {"type": "function_call_output", "call_id": "c1", "output": "b.py"}

    async def go() -> list[Any]:
        await session.add_items(POPPED)  # type: ignore[arg-type]
        await session.pop_item()
        await session.add_items([answer])  # type: ignore[list-item]
        return list(await session.get_items())

    # Before, the history answered "c1" under "c1_2", an output without its call.
    assert asyncio.run(go()) == session.items() == [*POPPED[:3], answer]


def test_a_reused_call_id_comes_back_as_it_was_added() -> None:
    """A server that numbers every reply's calls from call_0: the history gives each output its own id back."""
    session = CtxSession("r", window=WINDOW, tokenizer=HeuristicCounter())
    items = [
        {"role": "user", "content": "ls"},
        {"type": "function_call", "call_id": "call_0", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_0", "output": "a.py"},
        {"type": "function_call", "call_id": "call_0", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_0", "output": "b.py"},
    ]
    asyncio.run(session.add_items(items))  # type: ignore[arg-type]
    # Before, the second output came back as "call_0_2", the id it was recorded under.
    assert session.items() == items
