"""What a user calls per turn: `prepare` on the engine, then `to_openai` on its messages.

The session is the benchmarks' synthetic history (the same text as the peers' messages),
grown through a `DefaultContextEngine` as an agent grows it: with compaction at a 200k
window (a short summary stands in for the LLM's), or without compaction (a window large
enough that every message is sent). Each round restores the engine's state after the
history and prepares the same new turn, so every round generates, renders and converts
one new turn on the same session.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from ctxrules.dag import Call, Graph, Session
from ctxrules.engine import DefaultContextEngine
from ctxrules.render import to_openai
from ctxrules.rules import Pipeline

#: The context window with compaction; without it, one no history here fills.
WINDOW, UNBOUNDED = 200_000, 10**9
#: The summary the stand-in summarizer returns: short, like an LLM's, and the same each time.
SUMMARY = "The user and the assistant read, grepped and edited files of the project, turn by turn."
SESSION = "bench-engine"


@attrs.frozen
class EngineHistory:
    """An engine that has prepared every turn of a ``size``-item session, and the next turn.

    ``state`` is the engine's state after the history and ``ruler`` its memo of counts
    then, both restored before each round (so each round tokenizes the new turn's text, as
    a real turn does); ``session`` has the new turn appended, its head the new turn's
    assistant message.
    """

    size: int
    engine: DefaultContextEngine
    state: Any
    ruler: Any
    session: Session
    window: int
    now: float

    def restore(self) -> None:
        """Put the engine back where the history left it, before the new turn."""
        self.engine.states[SESSION] = self.state
        # A copy of the memo, not of the encoding it wraps (copying that costs milliseconds).
        self.engine.tokenizer = copy.deepcopy(self.ruler, {id(self.ruler.inner): self.ruler.inner})

    def turn(self) -> list[dict[str, object]]:
        """One turn as a user pays for it: prepare, then convert to Chat Completions."""
        prep = self.engine.prepare(self.session, window=self.window, now=self.now).unwrap()
        return to_openai(prep.messages)


def turn_calls(bench: Any, turn: int, previous: str | None) -> list[Call]:
    """The nodes of turn ``turn``, with the same text as ``bench.turn_items(turn)``."""
    now = turn * bench.SECONDS_PER_TURN
    tool = bench.TOOLS[turn % len(bench.TOOLS)]
    lines = bench.RESULT_LINES[turn % len(bench.RESULT_LINES)]
    return [
        Call(
            f"u{turn}", "user", output=bench.text(3 * turn, 2), predecessor=previous, created_at=now
        ),
        Call(
            f"a{turn}",
            "assistant",
            output=bench.text(3 * turn + 1, 3),
            predecessor=f"u{turn}",
            created_at=now,
        ),
        Call(
            f"t{turn}",
            "tool",
            name=tool,
            input={"path": f"src/pkg{turn % 37}/mod_{turn}.py"},
            output=bench.text(3 * turn + 2, lines),
            caller=f"a{turn}",
            metadata={"tool_call_id": f"call_{turn}"},
            created_at=now,
        ),
    ]


def build_engine_history(
    bench: Any, size: int, pipeline: Pipeline, *, compaction: bool
) -> EngineHistory:
    """Grow the session through the engine until it holds ``size`` items, then add a turn.

    With compaction the engine prepares every turn, as an agent does, up to 10k items, and
    every ``size // 10_000`` turns beyond (a 100k build preparing all 33k turns took 12
    minutes; the commit each round starts from is the same kind); without compaction,
    every ``size // 1000`` turns, since each such turn sends the whole history. The new turn is one that does not compact (if it would,
    it joins the history and the next turn is taken), so rounds time an ordinary turn.
    """
    engine = DefaultContextEngine(
        pipeline=pipeline,
        tokenizer=bench.RULER,
        summarizer=lambda _: SUMMARY,
        summarizer_timeout=None,
        auto_compact=compaction,
    )
    window = WINDOW if compaction else UNBOUNDED
    every = max(size // 10_000, 1) if compaction else max(size // 1000, 1)
    graph, turn, previous = Graph(), 0, None
    while True:
        for call in turn_calls(bench, turn, previous):
            graph = graph.append(call).unwrap()
        previous = f"a{turn}"
        now = turn * bench.SECONDS_PER_TURN
        session = Session(SESSION, graph, previous)
        grown = 3 * (turn + 1) >= size
        # The turn before the last one is always prepared: a round generates one turn.
        if turn % every == every - 1 or 3 * (turn + 2) >= size:
            state = engine.states.get(SESSION)
            ruler = (
                copy.deepcopy(engine.tokenizer, {id(bench.RULER): bench.RULER}) if grown else None
            )
            prep = engine.prepare(session, window=window, now=now).unwrap()
            if (
                grown
                and state is not None
                and not any(step.startswith("compact:finished") for step in prep.decision_path)
            ):
                return EngineHistory(size, engine, state, ruler, session, window, now)
        turn += 1


@pytest.fixture(scope="session")
def engine_histories(
    bench_module: Any, default_pipeline: Pipeline
) -> Callable[[int, bool], EngineHistory]:
    """A getter of the engine history of each size, with and without compaction, built once."""
    built: dict[tuple[int, bool], EngineHistory] = {}

    def get(size: int, compaction: bool) -> EngineHistory:
        if (size, compaction) not in built:
            with bench_module.gc_paused():
                built[size, compaction] = build_engine_history(
                    bench_module, size, default_pipeline, compaction=compaction
                )
        return built[size, compaction]

    return get


@pytest.mark.parametrize("compaction", [True, False], ids=["compaction", "no-compaction"])
def test_prepare_to_openai(
    benchmark: Any, engine_histories: Any, size: int, compaction: bool
) -> None:
    """Per turn, `prepare` plus `to_openai`, on a session grown through the engine."""
    history = engine_histories(size, compaction)
    kind = "prepare_openai" if compaction else "prepare_openai_full"
    history.restore()
    messages = history.turn()
    benchmark.extra_info.update(kind=kind, size=size, sent=len(messages))

    def setup() -> tuple[tuple[()], dict[str, object]]:
        history.restore()
        return (), {}

    out = benchmark.pedantic(history.turn, setup=setup, rounds=ROUNDS[size], iterations=1)
    assert out == messages
    if compaction and size > 1_000:
        assert len(messages) < size  # most of the history is behind the summary


#: Rounds per size; a round is one turn (milliseconds with compaction, more without).
ROUNDS = {1_000: 50, 10_000: 30, 100_000: 15}
