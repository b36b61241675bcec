"""The engine's hooks, component injection, the registry, and the rescue after 'prompt too long'."""

from __future__ import annotations

from ctxrules.compaction import Policy
from ctxrules.dag import Session
from ctxrules.engine import ContextEngine, DefaultContextEngine, EngineError
from ctxrules.engine.registry import EngineRegistry
from ctxrules.render import Message, TextBlock, count_messages
from ctxrules.render.system_prompt import AgentProfile
from ctxrules.tokens import HeuristicCounter
from ctxrules.tokens.usage import ProviderUsage, UsageState

RULER = HeuristicCounter()
AGENT = AgentProfile("Ada", "a1", system_prompt="Never drop the user's constraints.")


class RecordingSummarizer:
    """A fake summarizer that records its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, _prompt: tuple[object, ...]) -> str:
        self.calls += 1
        return "## Goal\nfix the parser\n## Decisions\nkeep tabs"


class MemoryStore:
    """A fake store keeping usage in a dict."""

    def __init__(self) -> None:
        self.saved: dict[str, UsageState] = {}

    def load_usage(self, session_id: str) -> UsageState | None:
        return self.saved.get(session_id)

    def save_usage(self, session_id: str, usage: UsageState) -> None:
        self.saved[session_id] = usage


def long_session(turns: int, size: int = 400) -> Session:
    """A session of ``turns`` user/assistant turns with a tool call each."""
    session = Session("s_engine")
    for turn in range(turns):
        session = session.send(
            "user", f"step {turn}: look at src/mod_{turn}.py", created_at=turn * 60.0
        ).unwrap()
        session = session.send(
            "assistant", f"reading mod_{turn}", created_at=turn * 60.0 + 1
        ).unwrap()
        session = session.record_call(
            session.head, "read_file", {"path": f"src/mod_{turn}.py"}, "line of code\n" * size
        ).unwrap()
    return session


def engine(**overrides: object) -> DefaultContextEngine:
    """The default engine with a heuristic ruler and the given components."""
    return DefaultContextEngine(tokenizer=RULER, **overrides)  # type: ignore[arg-type]


def test_prepare_renders_the_commit_and_records_its_steps() -> None:
    """A small session: generate, decide none, render; the messages are what the commit renders."""
    e = engine()
    prep = e.prepare(long_session(2, 5), window=32_000, agent=AGENT).unwrap()
    assert prep.decision_path == ("generate_commit", "decide:none", "render")
    system_tokens = count_messages((Message("system", (TextBlock(prep.system),)),), RULER)
    assert prep.request_tokens == count_messages(prep.messages, RULER) + system_tokens
    assert prep.occupancy.total_used == prep.request_tokens
    assert prep.system.startswith("── Agent prompt ──")
    assert not e.should_recommend(prep)


def test_prepare_without_a_head_is_a_failure() -> None:
    """An empty session cannot be prepared; the error says why."""
    assert engine().prepare(Session("empty"), window=8_000).failure() == EngineError(
        "empty", "the session has no head to prepare"
    )


def test_a_checkout_reuses_the_commit() -> None:
    """Preparing an older head again reuses its commit instead of generating one."""
    e = engine()
    session = long_session(2, 5)
    e.prepare(session, window=32_000).unwrap()
    again = e.prepare(session, window=32_000).unwrap()
    assert again.decision_path[0] == "reuse_commit"


def test_over_the_threshold_prepare_compacts_with_the_injected_summarizer() -> None:
    """At 80 % the engine compacts (no subclassing: the fake summarizer is a keyword) and prepares again."""
    summarizer = RecordingSummarizer()
    e = engine(summarizer=summarizer)
    prep = e.prepare(long_session(30), window=32_000, agent=AGENT, now=5000.0).unwrap()
    assert "compact:finished" in prep.decision_path
    assert summarizer.calls == 1
    assert prep.active_summary_id is not None
    assert prep.request_tokens <= prep.budget.input_budget
    assert prep.occupancy.generation == 1


def test_identity_and_inline_prompt_survive_a_compaction() -> None:
    """The system prompt is built outside the commit, so compaction never summarises it away."""
    e = engine(summarizer=RecordingSummarizer())
    small = e.prepare(long_session(1, 5), window=32_000, agent=AGENT).unwrap()
    big = e.prepare(long_session(30), window=32_000, agent=AGENT).unwrap()
    assert "compact:finished" in big.decision_path
    assert big.system.encode() == small.system.encode()
    assert "Never drop the user's constraints." in big.system


def test_prompt_too_long_rescues_and_keeps_the_cap() -> None:
    """The provider's 'prompt too long' compacts and snips below the refused request; the cap stays."""
    summarizer = RecordingSummarizer()
    e = engine(summarizer=summarizer, policy=Policy(compact_pct=None, emergency_pct=None))
    session = long_session(12)
    refused = e.prepare(session, window=32_000).unwrap()
    first = e.prepare(session, window=32_000, prompt_too_long=True).unwrap()
    assert any(step.startswith("compact:") for step in first.decision_path)
    assert first.request_tokens < refused.request_tokens
    third = e.prepare(session, window=32_000).unwrap()
    assert not any(step.startswith("compact:") for step in third.decision_path)
    assert third.request_tokens <= first.request_tokens


def test_after_turn_records_usage_persists_it_and_recommends() -> None:
    """after_turn feeds the provider's numbers back, saves them, and emits the recommendation."""
    store = MemoryStore()
    e = engine(store=store, auto_compact=False)
    e.on_session_start("s_engine")
    prep = e.prepare(long_session(24), window=32_000).unwrap()
    events: list[tuple[str, object]] = []
    e.after_turn(
        "s_engine",
        ProviderUsage(prep.request_tokens + 40, 100),
        prep,
        lambda name, data: events.append((name, data)),
    )
    assert store.saved["s_engine"].last_prompt_tokens == prep.request_tokens + 40
    assert [name for name, _ in events] == ["compaction_recommended"]
    assert e.should_recommend(prep)
    assert not e.should_auto_compact(prep)
    again = e.prepare(long_session(24), window=32_000).unwrap()
    assert again.occupancy.basis.value == "measured"
    assert again.occupancy.total_used == prep.request_tokens + 40


def test_session_start_and_end_load_and_flush_the_store() -> None:
    """on_session_start reads the saved usage (as cached); on_session_end writes it back."""
    store = MemoryStore()
    store.saved["s1"] = UsageState(turn_count=7, source="provider")
    e = engine(store=store)
    e.on_session_start("s1")
    assert e.states["s1"].usage.turn_count == 7
    e.ingest("s1", long_session(1, 1).graph.nodes[long_session(1, 1).head])
    e.on_session_end("s1")
    assert "s1" not in e.states
    assert store.saved["s1"].turn_count == 7


def test_manual_compact_needs_a_prepared_commit() -> None:
    """Compact before prepare is a Failure; after prepare it folds with keep_recent_tokens."""
    e = engine(summarizer=RecordingSummarizer(), auto_compact=False)
    assert e.compact("s_engine", window=32_000).failure() == EngineError(
        "s_engine", "no prepared commit to compact; call prepare first"
    )
    e.prepare(long_session(12), window=32_000).unwrap()
    result = e.compact("s_engine", window=32_000, keep_recent_tokens=2_000).unwrap()
    assert result.outcome.value == "finished"


class CustomEngine(DefaultContextEngine):
    """A named engine for the registry tests."""

    name = "custom"


def test_registry_priority_agent_then_config_then_default() -> None:
    """resolve_engine_for: the agent's field wins, then config context.engine, then the default."""
    registry = EngineRegistry()
    custom, other = CustomEngine(), DefaultContextEngine()
    registry.register_engine(custom)
    registry.register_engine(other, "other")
    with_field = AgentProfile("a", "1", context_engine="custom")
    without = AgentProfile("b", "2")
    assert registry.resolve_engine_for(with_field, {"context": {"engine": "other"}}) is custom
    assert registry.resolve_engine_for(without, {"context": {"engine": "other"}}) is other
    assert registry.resolve_engine_for(without, {}) is registry.default
    assert registry.get_engine("missing") is registry.default
    assert isinstance(registry.get_engine("custom"), ContextEngine)
