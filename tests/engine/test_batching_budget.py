"""The engine's budget batch point is decided on what is sent, and the cold trigger on the cache."""

from __future__ import annotations

from ctxrules.cache import anthropic, profile_for_model
from ctxrules.dag import Session, Status
from ctxrules.engine import DefaultContextEngine
from ctxrules.rules.batching import BatchReason, last_batch
from ctxrules.spec import load_spec

SPEC = """
[batching]
every_turns = 100
budget_share = 0.8
cold_after_seconds = 300
min_history_tokens = 100
[[rules]]
use = "cap_tool_result"
[rules.params]
max_chars = 400
[[rules]]
use = "age_tool_results"
[rules.params]
tail_turns = 1
"""


def _turn(session: Session, number: int, output: str) -> Session:
    """One user message, one assistant reply with a tool call, and the call's result."""
    session = session.send("user", f"step {number}").unwrap()
    session = session.send("assistant", f"reading {number}").unwrap()
    head = session.head or ""
    session = session.record_call(
        head,
        "read_file",
        {"path": f"f{number}"},
        metadata={"tool_call_id": f"c{number}"},
        status=Status.RUNNING,
    ).unwrap()
    call = session.graph.callees_of(head)[-1]
    return session.complete(call, output).unwrap()


def test_a_huge_result_cut_by_the_cap_is_no_budget_point() -> None:
    """A 190,000-character result sent as 400 characters does not cross 80 % of the budget."""
    engine = DefaultContextEngine(pipeline=load_spec(SPEC).unwrap())
    session = _turn(Session("s"), 0, "x " * 100)
    engine.prepare(session, window=8_000).unwrap()
    for number in range(1, 4):
        session = _turn(session, number, "abc " * 47_500)
        prep = engine.prepare(session, window=8_000).unwrap()
        assert last_batch(prep.commit) == (1, BatchReason.START), prep.decision_path


def test_a_sent_history_that_crosses_the_share_lands_the_held_back_tightening() -> None:
    """When what is sent crosses the share, aging lands on that very request."""
    engine = DefaultContextEngine(pipeline=load_spec(SPEC).unwrap())
    session = _turn(Session("s"), 0, "x " * 100)
    engine.prepare(session, window=8_000).unwrap()
    reasons = []
    for number in range(1, 30):
        session = _turn(session, number, f"line {number} " * 60)
        prep = engine.prepare(session, window=8_000).unwrap()
        reasons.append(last_batch(prep.commit)[1])
        assert prep.request_tokens <= prep.budget.input_budget
    assert BatchReason.BUDGET in reasons
    assert engine.states["s"].commits[session.head or ""] is prep.commit


def test_the_cold_trigger_is_the_provider_cache_lifetime() -> None:
    """An engine given a cache profile fires the cold trigger at the profile's TTL."""
    pipeline = load_spec(SPEC).unwrap()
    engine = DefaultContextEngine(pipeline=pipeline, cache_profile=anthropic(ttl="1h"))
    assert engine.pipeline.batching is not None
    assert engine.pipeline.batching.cold_after_seconds == 3_600.0
    assert engine.pipeline.version == pipeline.version
    assert DefaultContextEngine(pipeline=pipeline).pipeline == pipeline


def test_a_model_name_tells_its_provider_cache() -> None:
    """Claude models have Anthropic's cache, GPT and o-series OpenAI's; others are unknown."""
    assert profile_for_model("claude-3-5-haiku-latest") == anthropic()
    profile = profile_for_model("openai/gpt-4.1-mini")
    assert profile is not None
    assert (profile.name, profile.read) == ("openai", 0.25)
    assert profile_for_model("gpt-4o-mini") == profile_for_model("gpt-4o")
    assert profile_for_model("mistral-large") is None
