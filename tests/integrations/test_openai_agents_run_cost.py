"""A run's model calls cost the run's new items, and a session's save is one transaction."""

from __future__ import annotations

import asyncio
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
    RunConfig,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from agents_items import Reads, neutral

from ctxrules.check import protocol_valid
from ctxrules.integrations.openai_agents import CtxSession
from ctxrules.integrations.openai_agents import items as items_module
from ctxrules.render import count_messages
from ctxrules.store import SqliteStore
from ctxrules.tokens import HeuristicCounter

WINDOW = 4_000
RUNS = 12
CALLS = 3

set_tracing_disabled(True)


class ThreeReads(Reads, Model):
    """Reads three files per run, then answers; logs every input."""

    def __init__(self) -> None:
        super().__init__(calls=CALLS)


@function_tool
def read_file(part: int) -> str:
    """Read one part of the big file."""
    return f"part {part}: " + " ".join(f"line{part}_{i} holds some text" for i in range(60))


class Counted(SqliteStore):
    """The SQLite store, counting the transactions a save makes (one per node, before)."""

    writes: int = 0

    def write_turn(self, turn):  # type: ignore[no-untyped-def]
        self.writes += 1
        return super().write_turn(turn)

    def append_node(self, session_id, call):  # type: ignore[no-untyped-def]
        self.writes += 1
        return super().append_node(session_id, call)

    def complete_node(self, session_id, node_id, output, status):  # type: ignore[no-untyped-def]
        self.writes += 1
        return super().complete_node(session_id, node_id, output, status)


class Saves(CtxSession):
    """A CtxSession counting the SDK's add_items calls and the contexts it builds."""

    saves: int = 0
    requests: int = 0

    async def add_items(self, items: list[Any]) -> None:
        self.saves += 1
        await super().add_items(items)

    def context(self) -> list[dict[str, object]]:
        self.requests += 1
        return super().context()


def test_a_runs_model_calls_read_only_the_runs_new_items(tmp_path, monkeypatch) -> None:
    """Within a run the filter goes on from the session: it reads each new item once.

    Before, each call converted the whole input again (the session's context and the run),
    so a run's cost grew with the context.
    """
    store = Counted.open(str(tmp_path / "s.sqlite"), synchronous="NORMAL").unwrap()
    model = ThreeReads()
    agent = Agent(name="reader", instructions="Read.", model=model, tools=[read_file])
    session = Saves(
        "s", window=WINDOW, store=store, system=agent.instructions, tokenizer=HeuristicCounter()
    )
    config = RunConfig(call_model_input_filter=session.input_filter())
    read: list[int] = []
    real = items_module.entry_of

    def counting(item):  # type: ignore[no-untyped-def]
        read.append(1)
        return real(item)

    async def go() -> list[tuple[int, int]]:
        per_run = []
        for run in range(RUNS):
            read.clear()
            writes, saves, before = store.writes, session.saves, len(session.items())
            requests, calls = session.requests, len(model.inputs)
            await Runner.run(agent, f"Read part {run}.", session=session, run_config=config)
            added = len(session.items()) - before
            built = session.requests - requests + len(model.inputs) - calls
            saved = session.saves - saves + built
            per_run.append((len(read), store.writes - writes, saved, added))
        return per_run

    monkeypatch.setattr(items_module, "entry_of", counting)
    per_run = asyncio.run(go())
    assert len(session.items()) > 4 * per_run[-1][3], "the history outgrew one run's items"
    for converted, writes, saves, added in per_run[2:]:
        # Each filter call reads what is new since the last, and the run's end adds the
        # run's items to the session once more: each item read at most twice.
        assert converted <= 2 * added, (converted, added)
        # One transaction per save of items, and one per context built (its commits): the
        # filter's model calls too, so a session reopened goes on from the run's last.
        assert writes == saves, "each save is one transaction"
    counter = HeuristicCounter()
    for items in model.inputs:
        assert protocol_valid(neutral(items)) == []
        assert count_messages(neutral(items), counter) <= WINDOW
    store.close()


def test_the_filter_still_starts_over_for_an_input_that_is_not_a_run_of_the_session() -> None:
    """An input that does not begin with the session's context is read whole, as before."""
    session = CtxSession("s", window=WINDOW, tokenizer=HeuristicCounter())
    asyncio.run(session.add_items([{"role": "user", "content": "hello"}]))
    asyncio.run(session.get_items())
    run_filter = session.input_filter()
    other = [{"role": "user", "content": "something else entirely"}]
    assert run_filter._continued(other) is None
    entries = items_module.entries_of(other)
    live = run_filter._sync(entries)
    assert live is not None
    assert live.keys == [entry.key for entry in entries], (
        "the filter's session holds this input only"
    )
    assert [call.output for call in live.session.branch()] == ["something else entirely"]


def test_a_standalone_filter_reads_each_item_of_a_long_run_once(monkeypatch) -> None:
    """Without a session the SDK sends the whole run on every model call: only new items are read.

    Before, every call keyed each item of the run again (a content hash of each): a call
    cost 120 ms at 10,000 items, 12 ms at 1,000.
    """
    from ctxrules.integrations.openai_agents import ctxrules_input_filter  # noqa: PLC0415

    reads = 40

    class ManyReads(Reads, Model):
        def __init__(self) -> None:
            super().__init__(calls=reads)

    model = ManyReads()
    agent = Agent(name="reader", instructions="Read.", model=model, tools=[read_file])
    run_filter = ctxrules_input_filter(window=32_000, tokenizer=HeuristicCounter())
    config = RunConfig(call_model_input_filter=run_filter)
    read: list[int] = []
    real = items_module.entry_of

    def counting(item):  # type: ignore[no-untyped-def]
        read.append(1)
        return real(item)

    monkeypatch.setattr(items_module, "entry_of", counting)
    asyncio.run(Runner.run(agent, "Read every part.", run_config=config, max_turns=reads + 5))
    assert len(model.inputs) == reads + 1
    sent = len(model.inputs[-1])
    assert sent >= 2 * reads
    # Each item read once (the first call reads the user's message): not once per call.
    assert len(read) <= sent + 1, (len(read), sent)
