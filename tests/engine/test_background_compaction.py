"""Compaction off the hot path: summaries written in the background, landed at a batch point."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Mapping

import attrs
import pytest
from pyrsistent import pset

from ctxrules import Context
from ctxrules.check import one_summary
from ctxrules.check.compaction import is_summary, nothing_lost
from ctxrules.check.prefix import prefix_stable
from ctxrules.commit import ContextCommit
from ctxrules.dag import Session, branch
from ctxrules.engine import DefaultContextEngine, TurnPrep
from ctxrules.engine.background import Simulated, Threads
from ctxrules.engine.default import _same_facts
from ctxrules.engine.replay import replay
from ctxrules.render import Message
from ctxrules.rules import Facts, Pipeline
from ctxrules.rules.batching import BatchReason
from ctxrules.rules.facts import WorkMeter
from ctxrules.spec import load_spec
from ctxrules.spec.builtin import resolve_spec
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

WINDOW = 8_000
SUMMARY = "## Goal\nfix the parser\n## Decisions\nkeep tabs"


def chat(turns: int, words: int = 40, gap: float = 2.0) -> Session:
    """``turns`` user/assistant exchanges of about ``words`` words each, ``gap`` seconds apart."""
    session = Session("s_background")
    for turn in range(turns):
        for role in ("user", "assistant"):
            text = f"{role} {turn}: " + " ".join(f"w{turn}_{i}" for i in range(words))
            session = session.send(role, text, created_at=turn * 2 * gap).unwrap()
    return session


class Events:
    """Keeps the engine's summary events, by name."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, object]]] = []

    def __call__(self, name: str, data: Mapping[str, object]) -> None:
        if name.startswith("summary_"):
            self.seen.append((name, dict(data)))

    def names(self) -> list[str]:
        """The event names in order, without the prefix."""
        return [name.removeprefix("summary_") for name, _ in self.seen]


def engine(summarizer: object, background: object, **overrides: object) -> DefaultContextEngine:
    """The default engine with the default spec (batching on) and a heuristic ruler."""
    return DefaultContextEngine(
        pipeline=load_spec(resolve_spec("default")).unwrap(),
        tokenizer=HeuristicCounter(),
        summarizer=summarizer,  # type: ignore[arg-type]
        background=background,  # type: ignore[arg-type]
        **overrides,  # type: ignore[arg-type]
    )


def prepared(e: DefaultContextEngine, session: Session, upto: int | None = None) -> list[TurnPrep]:
    """Prepare every LLM call of ``session`` (the first ``upto``), in order, at the log's time."""
    calls = branch(session.graph, session.head)
    preps = []
    for index, call in enumerate(calls):
        if call.role.value != "assistant" or (upto is not None and len(preps) >= upto):
            continue
        live = Session(session.session_id, session.graph, calls[index - 1].id)
        preps.append(e.prepare(live, window=WINDOW, now=call.created_at).unwrap())
    return preps


def chain_problems(preps: list[TurnPrep], session: Session) -> list[object]:
    """Invariants 3, 12, 13 and 15 from each request's commit to the next."""
    found: list[object] = []
    previous: ContextCommit | None = None
    for prep in preps:
        commit = prep.commit
        found += one_summary(commit) + nothing_lost(commit, session.graph)
        if previous is not None:
            found += prefix_stable(previous, commit)
            known = {i.source_node_id for i in previous.items}
            survivors = [
                i for i in commit.items if not (is_summary(i) and i.source_node_id not in known)
            ]
            for old, new in zip(previous.items, survivors, strict=False):
                if old.source_node_id != new.source_node_id:
                    found.append(("13: order", old.source_node_id))
                elif not old.state.may_become(new.state) or new.tokens > old.tokens:
                    found.append(("3: loosened", old.source_node_id))
        previous = commit
    return found


def test_the_summary_is_written_in_the_background_and_lands_later() -> None:
    """Invariants 3, 12, 13, 14, 15: no turn below 95 % waits; the summary lands on a later turn."""
    events = Events()
    e = engine(lambda _: SUMMARY, Simulated(latency=5.0), on_event=events)
    session = chat(40)
    preps = prepared(e, session)
    paths = [p.decision_path for p in preps]
    started = next(i for i, path in enumerate(paths) if "summary:started" in path)
    applied = next(i for i, path in enumerate(paths) if "summary:applied" in path)
    assert started < applied
    assert not any("summary:waited" in path for path in paths)
    assert "started" in events.names()
    assert "applied" in events.names()
    assert chain_problems(preps, session) == []
    # Invariant 14: a landing folded something and saved tokens, by the one ruler.
    for name, data in events.seen:
        if name == "summary_applied":
            assert int(str(data["tokens_after"])) < int(str(data["tokens_before"]))
            assert int(str(data["summarised_count"])) > 0
    usage = e.states[session.session_id].usage
    assert usage.summary_calls >= 1
    assert usage.summary_prompt_tokens > 0


def test_a_summary_whose_prefix_changed_is_dropped_and_started_again() -> None:
    """An edit of a folded message makes the result stale: dropped, never landed, started again."""
    session = chat(40)
    dry = prepared(engine(lambda _: SUMMARY, Simulated(latency=5.0)), session)
    start = next(i for i, p in enumerate(dry) if "summary:started" in p.decision_path)
    events = Events()
    e = engine(lambda _: SUMMARY, Simulated(latency=5.0), on_event=events)
    prepared(e, session, upto=start + 1)
    job = e.jobs[session.session_id]
    # The session moves onto a branch that edits the first folded message, and goes on.
    folded = job.base.items[job.plan.positions[0]].source_node_id
    edited = session.edit(folded, "edited text " * 60, created_at=1e6).unwrap()
    for turn in range(40):
        edited = edited.send("assistant", f"reply {turn} " + "x " * 200, created_at=1e6).unwrap()
        e.prepare(edited, window=WINDOW, now=1e6 + turn * 10).unwrap()
    dropped = [d for n, d in events.seen if n == "summary_dropped"]
    assert dropped
    assert dropped[0]["reason"] == "stale"
    assert "started" in events.names()[events.names().index("dropped") :]


def test_a_summarizer_that_raises_in_the_background_never_reaches_the_turn() -> None:
    """Its failure is an event; the structural fallback lands at the compact threshold."""
    events = Events()

    def broken(_: tuple[Message, ...]) -> str:
        msg = "provider down"
        raise ConnectionError(msg)

    e = engine(broken, Threads(), on_event=events)
    session = chat(40)
    preps = prepared(e, session)
    assert "failed" in events.names()
    failure = next(d for n, d in events.seen if n == "summary_failed")
    assert failure["error"] == "ConnectionError: provider down"
    assert any("compact:finished:fallback" in p.decision_path for p in preps)
    assert e.states[session.session_id].usage.summary_calls == 0


def test_a_hanging_summarizer_gives_the_structural_fallback_at_the_emergency_threshold() -> None:
    """A summary that never comes: turns go on; at 95 % the fallback lands within the timeout."""
    release = threading.Event()

    def hangs(_: tuple[Message, ...]) -> str:
        release.wait(30)
        return SUMMARY

    e = engine(hangs, Threads(), summarizer_timeout=0.5)
    try:
        preps = prepared(e, chat(40))
    finally:
        release.set()
    waited = [p for p in preps if "summary:waited" in p.decision_path]
    assert all("decide:emergency" in p.decision_path for p in waited)
    assert any("compact:finished:fallback" in p.decision_path for p in preps)


def test_the_simulated_clock_decides_when_a_hung_summary_times_out() -> None:
    """Deterministic: a 1000-s summary against a 60-s timeout falls back at the emergency threshold."""
    events = Events()
    e = engine(lambda _: SUMMARY, Simulated(latency=1000.0), on_event=events)
    preps = prepared(e, chat(40))
    assert "failed" in events.names()
    first = next(p for p in preps if "compact:finished:fallback" in p.decision_path)
    assert "decide:emergency" in first.decision_path or "summary:applied" in first.decision_path


def test_close_cancels_the_background_summary() -> None:
    """After close() the summary under way never lands, even once the summarizer returns."""
    release = threading.Event()
    calls: list[int] = []

    def slow(_: tuple[Message, ...]) -> str:
        calls.append(1)
        release.wait(30)
        return SUMMARY

    e = engine(slow, Threads())
    session = chat(40)
    dry = prepared(engine(lambda _: SUMMARY, Simulated(latency=5.0)), session)
    start = next(i for i, p in enumerate(dry) if "summary:started" in p.decision_path)
    preps = prepared(e, session, upto=start + 1)
    assert "summary:started" in preps[-1].decision_path
    assert e.jobs
    job = next(iter(e.jobs.values()))
    e.close()
    release.set()
    assert not e.jobs
    assert job.pending.poll(0.0)
    assert isinstance(job.pending.outcome(), BaseException)


def test_replay_counts_the_summarizer_and_the_turns_that_waited() -> None:
    """The summarizer's tokens are a cost; blocking compaction waits, background does not."""
    session = chat(40)
    blocking = replay(session, engine(lambda _: SUMMARY, None), window=WINDOW)
    background = replay(session, engine(lambda _: SUMMARY, Simulated(5.0)), window=WINDOW)
    assert sum(r.waited for r in blocking) >= 1
    assert sum(r.waited for r in background) == 0
    assert sum(r.summary_cost for r in background) > 0
    assert sum(r.summary_cost for r in blocking) > 0
    structural = replay(session, engine(DefaultContextEngine().summarizer, None), window=WINDOW)
    assert sum(r.summary_cost for r in structural) == 0


def test_context_aopenai_runs_an_async_summarizer_as_a_task_on_the_callers_loop() -> None:
    """Through Context.aopenai(): the summary is a task on the caller's loop, no turn waits for it."""
    seen: list[tuple[asyncio.AbstractEventLoop, bool]] = []

    async def summarize(_: tuple[Message, ...]) -> str:
        seen.append(
            (asyncio.get_running_loop(), threading.current_thread() is threading.main_thread())
        )
        await asyncio.sleep(0.01)
        return SUMMARY

    async def loop() -> tuple[asyncio.AbstractEventLoop, list[tuple[str, ...]]]:
        clock = [0.0]
        ctx = Context(
            model="gpt-4o",
            window=32_000,
            summarizer=summarize,
            tokenizer=HeuristicCounter(),
            clock=lambda: clock[0],
        )
        ctx.add({"role": "user", "content": "Summarise every module."})
        paths = []
        for turn in range(30):
            clock[0] = turn * 5.0
            await ctx.aopenai()
            assert ctx.last is not None
            paths.append(ctx.last.decision_path)
            reply = f"Step {turn}: " + f"notes {turn}; " * 300
            await ctx.arecord(openai_response(turn, reply))
            await asyncio.sleep(0.02)  # the agent's own work, while the summary is written
            ctx.add({"role": "user", "content": f"Go on with step {turn + 1}."})
        ctx.close()
        return asyncio.get_running_loop(), paths

    running, paths = asyncio.run(loop())
    assert any("summary:started" in path for path in paths)
    assert any("summary:applied" in path for path in paths)
    assert all("decide:emergency" in path for path in paths if "summary:waited" in path)
    assert seen
    assert all(loop is running and on_main for loop, on_main in seen)


def _settling_loop(
    turns: int,
) -> tuple[list[object], list[tuple[str, ...]], Counter[tuple[str, float]]]:
    """A live loop at a 32k window: its requests, decision paths and settles by commit and time."""
    runs: Counter[tuple[str, float]] = Counter()
    settle = Pipeline.settle

    def counted(
        self: Pipeline, commit: ContextCommit, facts: Facts, why: BatchReason
    ) -> ContextCommit:
        runs[commit.id, facts.now] += 1
        return settle(self, commit, facts, why)

    clock = [0.0]
    ctx = Context(
        "default",
        model="gpt-4o",
        window=32_000,
        tokenizer=HeuristicCounter(),
        summarizer=lambda _: SUMMARY,
        clock=lambda: clock[0],
    )
    requests, paths = [], []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Pipeline, "settle", counted)
        for turn in range(turns):
            clock[0] = turn * 10.0
            words = " ".join(f"w{turn}_{i}" for i in range(20))
            ctx.add({"role": "user", "content": f"step {turn}: {words}"})
            call = (f"c{turn}", "read", {"path": f"src/m{turn}.py"})
            ctx.record(openai_response(turn, "reading", [call], (100, 0)))
            lines = (
                f"line {i} of m{turn}: v{turn}_{i} = {i * turn}" for i in range(10 + turn % 50)
            )
            ctx.add_tool_result(f"c{turn}", "\n".join(lines))
            requests.append(ctx.openai())
            paths.append(ctx.last.decision_path if ctx.last is not None else ())
    return requests, paths, runs


def test_a_commit_settled_at_the_budget_point_is_not_settled_again_to_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The turn that crosses the budget share and starts a summary settles its commit once.

    Both the budget point and the background summary's plan settle the same commit with
    the same facts; the plan reads the budget point's result (`settle_budget`). The
    requests are those of an engine that settles every time.
    """
    requests, paths, runs = _settling_loop(180)
    assert any("summary:started" in path for path in paths)
    assert max(runs.values()) == 1
    monkeypatch.setattr(
        DefaultContextEngine,
        "settle_budget",
        lambda self, _sid, commit, facts: self.pipeline.settle(commit, facts, BatchReason.BUDGET),
    )
    every, every_paths, every_runs = _settling_loop(180)
    assert every == requests
    assert every_paths == paths
    # Without the shared result, each turn that started a summary settled its commit twice.
    started = sum("summary:started" in path for path in paths)
    assert sum(count - 1 for count in every_runs.values()) == started


def test_same_facts_compares_every_field_of_facts() -> None:
    """`_same_facts` names every field of `Facts`: a new field must be compared there too."""
    assert [f.name for f in attrs.fields(Facts)] == [
        "now", "context_window", "budget", "tokenizer", "cited", "head_turn", "meter"
    ]  # fmt: skip
    ruler = HeuristicCounter()
    base = Facts(now=1.0, tokenizer=ruler)
    assert _same_facts(base, attrs.evolve(base))
    for change in ({"now": 2.0}, {"context_window": 8}, {"budget": 9}, {"head_turn": 3},
                   {"tokenizer": HeuristicCounter()}, {"cited": pset(["n"])},
                   {"meter": WorkMeter()}):  # fmt: skip
        assert not _same_facts(base, attrs.evolve(base, **change))
