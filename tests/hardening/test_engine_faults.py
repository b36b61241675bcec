"""Engine faults found by fuzzing and by a new user (issue 16), each guarded by its reproducer."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping

import pytest
from returns.result import Failure

from ctxrules.commit import ContextItem
from ctxrules.dag import Session
from ctxrules.engine import DefaultContextEngine
from ctxrules.render.system_prompt import AgentProfile
from ctxrules.rules import ReferenceTracker
from ctxrules.tokens import HeuristicCounter
from ctxrules.tokens.usage import ProviderUsage, UsageState

RULER = HeuristicCounter()


def long_session(turns: int, size: int = 400) -> Session:
    """``turns`` user/assistant turns, each with a tool result of ``size`` lines."""
    session = Session("s_long")
    for turn in range(turns):
        session = session.send("user", f"step {turn}: look at src/mod_{turn}.py").unwrap()
        session = session.send("assistant", f"reading mod_{turn}").unwrap()
        session = session.record_call(
            session.head, "read_file", {"path": f"src/mod_{turn}.py"}, "line of code\n" * size
        ).unwrap()
    return session


def grep_then_cite() -> Session:
    """A grep whose result names a file, then a user message that cites that file."""
    session = Session("s_cite").send("user", "find the handler").unwrap()
    session = session.send("assistant", "searching").unwrap()
    session = session.record_call(
        session.head, "grep", {"pattern": "handler"}, "path/alpha_handler.py:12: def handle()"
    ).unwrap()
    return session.send("user", "now edit path/alpha_handler.py").unwrap()


def test_tool_results_are_cited_by_later_messages() -> None:
    """Fault 1: the engine's reference map indexes tool results, so a later mention cites them."""
    session = grep_then_cite()
    engine = DefaultContextEngine(tokenizer=RULER)
    engine.prepare(session, window=200_000).unwrap()
    tool = next(c.id for c in session.graph.nodes.values() if c.role.value == "tool")
    assert tool in engine.states["s_cite"].references.cited


def test_five_refusals_make_five_strictly_smaller_requests() -> None:
    """Fault 2: each 'prompt too long' shrinks the next request, and the state says so."""
    session = long_session(30)
    engine = DefaultContextEngine(tokenizer=RULER)
    sizes = [engine.prepare(session, window=32_000).unwrap().request_tokens]
    for refusal in range(1, 6):
        prep = engine.prepare(session, window=32_000, prompt_too_long=True).unwrap()
        sizes.append(prep.request_tokens)
        rescue = engine.states["s_long"].rescue
        assert rescue.refusals == refusal
        assert prep.request_tokens <= (rescue.cap or 0)
        assert any("refused" in warning for warning in prep.warnings)
    assert all(later < earlier for earlier, later in itertools.pairwise(sizes)), sizes


def test_a_stated_limit_is_used() -> None:
    """Fault 2: the limit a provider's error states caps the next request."""
    session = long_session(30)
    engine = DefaultContextEngine(tokenizer=RULER)
    engine.prepare(session, window=32_000).unwrap()
    error = "prompt is too long: 30000 tokens > 3000 maximum"
    prep = engine.prepare(session, window=32_000, prompt_too_long=error).unwrap()
    assert prep.request_tokens <= 3_000


def test_compaction_fires_at_a_small_window() -> None:
    """Fault 3: at 8k the engine compacts rather than snipping every turn."""
    engine = DefaultContextEngine(tokenizer=RULER, summarizer=lambda _: "the gist")
    prep = engine.prepare(long_session(30, size=20), window=8_000).unwrap()
    assert "compact:finished" in prep.decision_path, prep.decision_path


def _cancelling(_: object) -> str:
    raise asyncio.CancelledError


def _surrogate(_: object) -> str:
    return "summary \ud800 text"


@pytest.mark.parametrize("summarizer", [_cancelling, _surrogate])
def test_summarizer_faults_never_escape_prepare(summarizer: object) -> None:
    """Fault 4: a CancelledError or a lone surrogate from the summarizer never escapes prepare."""
    events: list[tuple[str, Mapping[str, object]]] = []
    engine = DefaultContextEngine(
        tokenizer=RULER,
        summarizer=summarizer,  # type: ignore[arg-type]
        summarizer_timeout=None,
        on_event=lambda name, data: events.append((name, data)),
    )
    prep = engine.prepare(long_session(30), window=16_000).unwrap()
    assert any(step.startswith("compact:finished") for step in prep.decision_path)
    assert "compaction_finished" in [name for name, _ in events]
    for message in prep.messages:
        for block in message.blocks:
            str(getattr(block, "text", "")).encode()


def test_a_structural_fallback_is_said_out_loud() -> None:
    """Fault 4: a fallback is in the decision path, the warnings and the event."""
    events: list[tuple[str, Mapping[str, object]]] = []
    engine = DefaultContextEngine(tokenizer=RULER, on_event=lambda n, d: events.append((n, d)))
    prep = engine.prepare(long_session(30), window=16_000).unwrap()
    assert "compact:finished:fallback" in prep.decision_path
    assert any("structural fallback" in warning for warning in prep.warnings)
    finished = [data for name, data in events if name == "compaction_finished"]
    assert finished
    assert finished[0]["fallback"] is True
    assert next(name for name, _ in events) == "compaction_started"


@pytest.mark.parametrize("window", [0, -5, True, 1.5, "8000"])
def test_a_bad_window_is_a_failure(window: object) -> None:
    """Fault 8: prepare with a window that is not a positive int is a Failure naming it."""
    engine = DefaultContextEngine(tokenizer=RULER)
    result = engine.prepare(long_session(2), window=window)  # type: ignore[arg-type]
    assert isinstance(result, Failure)
    assert "window=" in str(result.failure().message)


def test_a_window_smaller_than_the_system_prompt_warns() -> None:
    """Fault 8: a request that cannot fit the window comes with a warning, not silence."""
    agent = AgentProfile("Ada", "a1", system_prompt="rule " * 400)
    engine = DefaultContextEngine(tokenizer=RULER)
    prep = engine.prepare(long_session(3), window=200, agent=agent).unwrap()
    assert any("over the" in warning for warning in prep.warnings), prep.warnings
    assert prep.messages


class _Usage:
    """A store of usage that is not the SQLite store."""

    def __init__(self, usage: UsageState) -> None:
        self.usage = usage

    def load_usage(self, _session_id: str) -> UsageState | None:
        return self.usage

    def save_usage(self, _session_id: str, usage: UsageState) -> None:
        self.usage = usage


def test_restored_usage_is_cached_for_any_usage_store() -> None:
    """Fault 12: usage restored from any UsageStore is marked cached, not provider."""
    measured = UsageState().record(ProviderUsage(1_000), estimated_request=900)
    engine = DefaultContextEngine(tokenizer=RULER, store=_Usage(measured))
    engine.on_session_start("s")
    assert engine.states["s"].usage.source == "cached"


def test_trackers_are_components_by_keyword() -> None:
    """Fault 12: the usage and reference trackers are passed by keyword like other components."""
    seeded = ReferenceTracker().observe([ContextItem("n0", "tool", rendered="wrote src/x.py")])
    usage = UsageState(turn_count=7)
    engine = DefaultContextEngine(tokenizer=RULER, usage_tracker=usage, reference_tracker=seeded)
    engine.on_session_start("s")
    assert engine.states["s"].usage.turn_count == 7
    assert engine.states["s"].references == seeded


@pytest.mark.parametrize("value", [None, "100", -5_000, 1.5, True])
def test_provider_usage_refuses_what_is_not_a_count(value: object) -> None:
    """Fault 11: ProviderUsage(None), ("100") and negative counts are refused when built."""
    with pytest.raises((TypeError, ValueError), match="prompt_tokens="):
        ProviderUsage(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("source", ["c_" + "0" * 64, None, 42])
def test_attach_of_a_bare_id_is_a_failure(source: object) -> None:
    """Fault 12: attaching an id string (or any non-commit) returns a Failure, never raises."""
    session = long_session(1)
    assert isinstance(session.attach(source), Failure)  # type: ignore[arg-type]
    assert isinstance(session.merge([source], "merge"), Failure)  # type: ignore[list-item]
