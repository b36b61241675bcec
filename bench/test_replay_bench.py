"""Replay benchmarks: each real session replayed in full, beside its tokenization floor.

The floor is the least any tool that reads the session must pay: every node's text
tokenized once by the same ruler. ``replay`` also measures the naive resend, the cached
prefix and protocol validity at every request; the engine-only loop does just what an
agent pays (``prepare`` and ``after_turn`` at every LLM call).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxrules.dag import Session, branch
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.replay import llm_calls, replay
from ctxrules.generation.generate import node_text
from ctxrules.importers import import_session
from ctxrules.tokens.usage import ProviderUsage

WINDOW = 200_000
ROUNDS = 3
_IMPORTED: dict[Path, Session] = {}


@pytest.fixture
def recorded(session_path: Path) -> Session:
    """The session at ``session_path``, imported once per run."""
    if session_path not in _IMPORTED:
        _IMPORTED[session_path] = import_session(session_path, skip_bad=True).unwrap().session
    return _IMPORTED[session_path]


def session_texts(session: Session) -> list[str]:
    """All the text of a session: every node's output and input, as the model reads them."""
    texts = [node_text(call.output) for call in session.graph.nodes.values()]
    texts += [node_text(c.input) for c in session.graph.nodes.values() if c.input is not None]
    return texts


def describe(benchmark: Any, kind: str, path: Path, session: Session, ruler: Any) -> None:
    texts = session_texts(session)
    benchmark.extra_info.update(
        kind=kind,
        session=f"{path.parent.name}/{path.name}",
        nodes=len(session.graph),
        requests=sum(1 for _ in llm_calls(session)),
        tokens=sum(ruler.count(text) for text in texts),
    )


def test_tokenization_floor(
    benchmark: Any, session_path: Path, recorded: Session, ruler: Any
) -> None:
    """The floor: all the text of the session tokenized once."""
    texts = session_texts(recorded)
    describe(benchmark, "floor", session_path, recorded, ruler)
    total = benchmark(lambda: sum(ruler.count(text) for text in texts))
    assert total == benchmark.extra_info["tokens"]


def test_replay(
    benchmark: Any, session_path: Path, recorded: Session, ruler: Any, default_pipeline: Any
) -> None:
    """`replay` of the whole session through the default pipeline at a 200k window."""

    def fresh() -> tuple[tuple[Any, ...], dict[str, Any]]:
        engine = DefaultContextEngine(pipeline=default_pipeline, tokenizer=ruler)
        return (recorded, engine), {"window": WINDOW}

    describe(benchmark, "replay", session_path, recorded, ruler)
    requests = benchmark.pedantic(replay, setup=fresh, rounds=ROUNDS)
    assert len(requests) == benchmark.extra_info["requests"]


def test_engine_turns(
    benchmark: Any, session_path: Path, recorded: Session, ruler: Any, default_pipeline: Any
) -> None:
    """What an agent pays over the session: prepare and after_turn at every LLM call."""

    def fresh() -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (DefaultContextEngine(pipeline=default_pipeline, tokenizer=ruler),), {}

    def run(engine: DefaultContextEngine) -> int:
        calls = branch(recorded.graph, recorded.head)
        done = 0
        for before, call in llm_calls(recorded):
            live = Session(recorded.session_id, recorded.graph, calls[before].id)
            prep = engine.prepare(live, window=WINDOW, now=call.created_at).unwrap()
            engine.after_turn(recorded.session_id, ProviderUsage(prep.request_tokens), prep)
            done += 1
        return done

    describe(benchmark, "engine", session_path, recorded, ruler)
    done = benchmark.pedantic(run, setup=fresh, rounds=ROUNDS)
    assert done == benchmark.extra_info["requests"]
