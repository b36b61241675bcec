"""Compaction off the hot path, measured on every shared session (docs/compaction.md).

    python bench/background_compaction.py                      # 32k, a 5-s summarizer, both parts
    python bench/background_compaction.py --window 64000 --latency 20
    python bench/background_compaction.py --part replay        # or --part async
    python bench/background_compaction.py --part faults        # a summarizer that raises, hangs

``replay``: each session is replayed twice through `ctxrules.engine.replay.replay`, once
compacting in the turn (blocking) and once with summaries written in the background by a
summarizer that takes ``--latency`` seconds, simulated on the log's clock (`Simulated`:
deterministic, no thread). ``async``: each session is driven through ``Context.aopenai()``
and ``arecord()`` with an ``async`` summarizer that really sleeps, as a task on the loop;
the recorded gaps between calls and the summarizer's sleep are both scaled by ``--scale``.

For every session: turns that waited for a summary (below and at the emergency threshold),
summaries started, applied, dropped as stale, failed, the turns from start to landing,
invariants 3, 12, 13, 14 and 15 on every commit, and the cache-weighted cost (the
summarizer's own tokens included) against blocking compaction. The exit status is 1 when a
turn waited below the emergency threshold, an invariant broke, or the cost is more than
5 % over blocking in total.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ctxrules import Context
from ctxrules.cache import PROFILES, CacheProfile, CacheState
from ctxrules.check import one_summary
from ctxrules.check.compaction import is_summary, nothing_lost
from ctxrules.check.prefix import prefix_stable
from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit
from ctxrules.dag import Graph, Role, Session, branch
from ctxrules.dag.payload import thaw
from ctxrules.engine import DefaultContextEngine, TurnPrep
from ctxrules.engine.background import Simulated, Threads
from ctxrules.engine.replay import replay, shared_prefix, waited
from ctxrules.generation import node_text
from ctxrules.importers import import_session
from ctxrules.render import Message, TextBlock
from ctxrules.spec import load_spec
from ctxrules.spec.builtin import resolve_spec
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import default_tokenizer

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = ROOT.parent / "shared" / "data" / "sessions"
SUFFIXES = (".jsonl", ".json")
#: The cost goal: background compaction within this share of blocking compaction's cost.
COST_SLACK = 0.05
#: The longest recorded gap between calls the async part sleeps (scaled): a user's
#: half-hour pause would only make the run longer.
MAX_GAP = 30.0
#: The session the faults part replays: long, with compactions at 32k.
FAULTS_SESSION = "claude-code/9b_04c3d92e38_4.jsonl"


def summary_text(prompt: tuple[Message, ...]) -> str:
    """The fake summarizer's answer: a fixed heading and the prompt's last 600 characters."""
    text = " ".join(b.text for m in prompt for b in m.blocks if isinstance(b, TextBlock))
    return "## Goal\n" + text[-600:]


@attrs.define
class Run:
    """One session through one mode: the turns prepared and the events the engine sent."""

    preps: list[TurnPrep] = attrs.Factory(list)
    events: list[tuple[str, dict[str, object]]] = attrs.Factory(list)
    cost: float = 0.0
    seconds: float = 0.0
    graph: Graph | None = None

    def on_event(self, name: str, data: Mapping[str, object]) -> None:
        """Keep every summary event."""
        if name.startswith("summary_"):
            self.events.append((name, dict(data)))


@attrs.frozen
class Row:
    """One session: blocking against background."""

    session: str
    requests: int
    waits_below: int
    waits_emergency: int
    blocking_waits: int
    started: int
    applied: int
    dropped: int
    failed: int
    turns_to_apply: tuple[int, ...]
    violations: int
    blocking_cost: float
    cost: float

    @property
    def ratio(self) -> float:
        """Background cost over blocking cost."""
        return self.cost / self.blocking_cost if self.blocking_cost else 1.0


def session_files(folder: Path) -> list[Path]:
    """Every recorded session under ``folder``, sorted."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


# -- invariants on every commit ---------------------------------------------------------------


def _tightened_in_order(before: ContextCommit, after: ContextCommit) -> list[Violation]:
    """Invariants 3 and 13 from one request's commit to the next: old items in order, none looser."""
    new_summaries = {
        i.source_node_id
        for i in after.items
        if is_summary(i) and i.source_node_id not in {j.source_node_id for j in before.items}
    }
    survivors = [i for i in after.items if i.source_node_id not in new_summaries]
    found: list[Violation] = []
    for old, now in zip(before.items, survivors, strict=False):
        if old.source_node_id != now.source_node_id:
            found.append(Violation(13, (old.source_node_id,), "the old items in order", "moved"))
            break
        if not old.state.may_become(now.state) or now.tokens > old.tokens:
            found.append(Violation(3, (old.source_node_id,), "no looser, no larger", "looser"))
    return found


def check_run(run: Run, graph: Graph) -> list[Violation]:
    """Invariants 3, 12, 13, 14 and 15 on every commit the run sent, and 14 on every landing."""
    found: list[Violation] = []
    previous: ContextCommit | None = None
    for prep in run.preps:
        commit = prep.commit
        found += one_summary(commit) + nothing_lost(commit, graph)
        if previous is not None and previous.head_node_id != commit.head_node_id:
            found += _tightened_in_order(previous, commit) + prefix_stable(previous, commit)
        previous = commit
    by_head = {prep.head: prep for prep in run.preps}
    for name, data in run.events:
        if name != "summary_applied":
            continue
        before, after = int(str(data["tokens_before"])), int(str(data["tokens_after"]))
        prep = by_head.get(str(data["head"]))
        sent = (
            prep.commit.total_tokens + prep.budget.system + prep.budget.tools_schema
            if prep
            else after
        )
        if not (after < before and int(str(data["summarised_count"])) > 0 and after == sent):
            found.append(
                Violation(14, (str(data["base_commit_id"]),), "an honest landing", str(data))
            )
    return found


def _stats(run: Run, mode: str) -> dict[str, Any]:
    index = {prep.head: n for n, prep in enumerate(run.preps)}
    starts = {
        str(d["base_commit_id"]): index.get(str(d["started_head"]), 0)
        for n, d in run.events
        if n == "summary_started"
    }
    turns = tuple(
        index.get(str(d["head"]), 0)
        - starts.get(str(d["base_commit_id"]), index.get(str(d["started_head"]), 0))
        for n, d in run.events
        if n == "summary_applied"
    )
    count = {
        name: sum(1 for n, _ in run.events if n == f"summary_{name}")
        for name in ("started", "applied", "dropped", "failed")
    }
    waits = [p for p in run.preps if waited(p)]
    below = [p for p in waits if "decide:emergency" not in p.decision_path]
    return {
        "turns": turns,
        "count": count,
        "waits": len(waits),
        "below": len(below) if mode == "background" else 0,
    }


# -- the replay part --------------------------------------------------------------------------


def _engine(spec: str, run: Run, latency: float | None) -> DefaultContextEngine:
    engine = DefaultContextEngine(
        pipeline=load_spec(resolve_spec(spec)).unwrap(),
        summarizer=summary_text,
        tokenizer=default_tokenizer(),
        on_event=run.on_event,
        background=Simulated(latency) if latency is not None else None,
    )
    prepare = engine.prepare

    def kept(*args: Any, **kwargs: Any) -> Any:
        result = prepare(*args, **kwargs)
        run.preps.append(result.unwrap())
        return result

    engine.prepare = kept  # type: ignore[method-assign]
    return engine


def replayed(
    session: Session, spec: str, window: int, profile: CacheProfile, latency: float | None
) -> Run:
    """One replay of ``session``: blocking with ``latency`` None, else in the background."""
    run = Run()
    started = time.perf_counter()
    requests = replay(session, _engine(spec, run, latency), window=window, profile=profile)
    run.cost = sum(r.cost for r in requests)
    run.seconds = time.perf_counter() - started
    return run


# -- the async part, through Context ----------------------------------------------------------


def _price(
    preps: Sequence[TurnPrep], times: Sequence[float], profile: CacheProfile, tokenizer: Any
) -> float:
    """The cache-weighted cost of the requests a Context sent, as `replay` prices them."""
    cache, last, cost = CacheState(), (), 0.0
    for prep, now in zip(preps, times, strict=True):
        fixed = prep.budget.system + prep.budget.tools_schema
        shared, tokens = shared_prefix(last, prep.messages, prep.request_tokens - fixed, tokenizer)
        priced, cache = cache.price(
            profile,
            now=now,
            tokens=prep.request_tokens,
            messages=len(prep.messages),
            shared_messages=shared,
            shared_tokens=tokens + fixed,
        )
        cost += priced.prompt_cost
        last = prep.messages
    return cost


async def driven(  # noqa: PLR0917 - a bench function, called twice
    session: Session,
    spec: str,
    window: int,
    profile: CacheProfile,
    latency: float,
    scale: float,
    *,
    background: bool,
) -> Run:
    """``session`` through ``Context.aopenai()``; the summarizer sleeps ``latency * scale`` seconds."""
    run = Run()
    calls = branch(session.graph, session.head)
    clock = [calls[0].created_at if calls else 0.0]

    async def summarizer(prompt: tuple[Message, ...]) -> str:
        await asyncio.sleep(latency * scale)
        return summary_text(prompt)

    ctx = Context(
        load_spec(resolve_spec(spec)).unwrap(),
        model="claude-sonnet-4-5",
        window=window,
        summarizer=summarizer,
        tokenizer=default_tokenizer(),
        clock=lambda: clock[0],
        background=background,
    )
    ctx.engine.on_event = run.on_event
    times: list[float] = []
    started = time.perf_counter()
    previous = clock[0]
    for n, call in enumerate(calls):
        if call.role is Role.USER:
            ctx.add({"role": "user", "content": node_text(call.output) or "(empty)"})
            continue
        if call.role is not Role.ASSISTANT or ctx.session.head is None:
            continue
        # The agent's model call took the recorded gap (1 to 30 seconds), scaled.
        gap = min(max(call.created_at - previous, 1.0), MAX_GAP)
        previous = clock[0] = max(call.created_at, previous + 1.0)
        await asyncio.sleep(gap * scale)
        await ctx.aopenai()
        assert ctx.last is not None
        run.preps.append(ctx.last)
        times.append(clock[0])
        tools = [session.graph.nodes[c] for c in session.graph.callees_of(call.id)]
        tools = [t for t in tools if t.role is Role.TOOL]
        ids = [str(t.metadata.get("tool_call_id") or f"call_{n}_{k}") for k, t in enumerate(tools)]
        replies = [
            (i, t.name or "tool", _arguments(t.input)) for i, t in zip(ids, tools, strict=True)
        ]
        await ctx.arecord(openai_response(n, node_text(call.output) or "…", replies))
        for i, tool in zip(ids, tools, strict=True):
            ctx.add(
                {
                    "role": "tool",
                    "tool_call_id": i,
                    "content": node_text(tool.output) or "(no output)",
                }
            )
    ctx.close()
    run.graph = ctx.session.graph
    run.seconds = time.perf_counter() - started
    run.cost = _price(run.preps, times, profile, ctx.engine.tokenizer) + _summary_cost(ctx, profile)
    return run


def _arguments(value: Any) -> dict[str, object]:
    plain = thaw(value)
    return plain if isinstance(plain, dict) else {"input": node_text(value)}


def _summary_cost(ctx: Context, profile: CacheProfile) -> float:
    usage = ctx.engine.states[ctx.session.session_id].usage
    return usage.summary_prompt_tokens + profile.output * usage.summary_completion_tokens


# -- a summarizer that raises or hangs -------------------------------------------------------


def faults(session: Session, spec: str, window: int, timeout: float) -> list[str]:
    """Replay with real threads and a summarizer that raises, then one that hangs: table rows."""
    release = threading.Event()

    def raises(_: tuple[Message, ...]) -> str:
        msg = "provider down"
        raise ConnectionError(msg)

    def hangs(prompt: tuple[Message, ...]) -> str:
        release.wait(600)
        return summary_text(prompt)

    rows = []
    for name, summarizer in (("raises", raises), ("hangs", hangs)):
        run, seconds = Run(), []
        engine = DefaultContextEngine(
            pipeline=load_spec(resolve_spec(spec)).unwrap(),
            summarizer=summarizer,
            tokenizer=default_tokenizer(),
            on_event=run.on_event,
            background=Threads(),
            summarizer_timeout=timeout,
        )
        prepare = engine.prepare

        def timed(
            *args: Any,
            prepare: Any = prepare,
            seconds: list[float] = seconds,
            run: Run = run,
            **kwargs: Any,
        ) -> Any:
            started = time.perf_counter()
            result = prepare(*args, **kwargs)
            seconds.append(time.perf_counter() - started)
            run.preps.append(result.unwrap())
            return result

        engine.prepare = timed  # type: ignore[method-assign]
        replay(session, engine, window=window)
        waits = [
            s
            for p, s in zip(run.preps, seconds, strict=True)
            if "summary:waited" in p.decision_path
        ]
        below = sum(
            1
            for p in run.preps
            if "summary:waited" in p.decision_path and "decide:emergency" not in p.decision_path
        )
        fallbacks = sum(1 for p in run.preps if "compact:finished:fallback" in p.decision_path)
        failed = sum(1 for n, _ in run.events if n == "summary_failed")
        rows.append(
            f"| {name} | {len(run.preps)} | {failed} | {below} | {len(waits)} | {max(waits, default=0.0):.2f} s | {fallbacks} | {len(check_run(run, session.graph))} |"
        )
        engine.close()
    release.set()
    return rows


# -- the table --------------------------------------------------------------------------------


def row(name: str, blocking: Run, background: Run, graph: Graph) -> Row:
    """Compare the two runs of one session."""
    stats, base = _stats(background, "background"), _stats(blocking, "blocking")
    return Row(
        name,
        len(background.preps),
        stats["below"],
        stats["waits"] - stats["below"],
        base["waits"],
        stats["count"]["started"],
        stats["count"]["applied"],
        stats["count"]["dropped"],
        stats["count"]["failed"],
        stats["turns"],
        len(check_run(background, background.graph or graph)),
        blocking.cost,
        background.cost,
    )


def print_table(
    title: str, rows: Sequence[Row], out: Callable[[str], object] | None = None
) -> None:
    """A Markdown table, one line per session and a total."""
    out = out or (lambda line: sys.stdout.write(line + "\n"))
    out(f"\n### {title}\n")
    out(
        "| session | requests | waited below 95 % | waited at 95 % | blocking: turns waited | started | applied | dropped (stale) | failed | turns start→apply (mean / max) | invariant violations | cost vs blocking |"
    )
    out("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for r in [*rows, _total(rows)]:
        turns = (
            f"{statistics.mean(r.turns_to_apply):.1f} / {max(r.turns_to_apply)}"
            if r.turns_to_apply
            else "-"
        )
        out(
            f"| {r.session} | {r.requests} | {r.waits_below} | {r.waits_emergency} | {r.blocking_waits} | {r.started} | {r.applied} | "
            f"{r.dropped} | {r.failed} | {turns} | {r.violations} | {r.ratio - 1:+.1%} |"
        )


def _total(rows: Sequence[Row]) -> Row:
    def total(name: str) -> Any:
        return sum(getattr(r, name) for r in rows)

    names = (
        "requests",
        "waits_below",
        "waits_emergency",
        "blocking_waits",
        "started",
        "applied",
        "dropped",
        "failed",
    )
    return Row(
        "**total**",
        *(total(n) for n in names),
        tuple(t for r in rows for t in r.turns_to_apply),
        total("violations"),
        total("blocking_cost"),
        total("cost"),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the parts asked for and print their tables; 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--latency", type=float, default=5.0, help="the summarizer's seconds")
    parser.add_argument("--spec", default="default")
    parser.add_argument("--provider", choices=sorted(PROFILES), default="anthropic")
    parser.add_argument("--sessions", type=Path, default=SESSIONS)
    parser.add_argument("--part", choices=("replay", "async", "faults", "both"), default="both")
    parser.add_argument("--timeout", type=float, default=2.0, help="summarizer_timeout (faults)")
    parser.add_argument(
        "--scale", type=float, default=0.02, help="real seconds per simulated one (async)"
    )
    args = parser.parse_args(argv)
    profile = PROFILES[args.provider]
    missed = False
    if args.part == "faults":
        session = import_session(args.sessions / FAULTS_SESSION, skip_bad=True).unwrap().session
        sys.stdout.write(
            f"\n### faults: {FAULTS_SESSION} at {args.window:,}, real threads, timeout {args.timeout:g} s\n\n"
        )
        sys.stdout.write(
            "| summarizer | requests | summary_failed events | waited below 95 % | waited at 95 % | longest wait | structural fallbacks landed | invariant violations |\n"
        )
        sys.stdout.write("|---|---:|---:|---:|---:|---:|---:|---:|\n")
        for line in faults(session, args.spec, args.window, args.timeout):
            sys.stdout.write(line + "\n")
        return 0
    for part in ("replay", "async"):
        if args.part not in (part, "both"):
            continue
        rows = []
        for path in session_files(args.sessions):
            session = import_session(path, skip_bad=True).unwrap().session
            if part == "replay":
                blocking = replayed(session, args.spec, args.window, profile, None)
                background = replayed(session, args.spec, args.window, profile, args.latency)
            else:
                runs = [
                    asyncio.run(
                        driven(
                            session,
                            args.spec,
                            args.window,
                            profile,
                            args.latency,
                            args.scale,
                            background=in_background,
                        )
                    )
                    for in_background in (False, True)
                ]
                blocking, background = runs
            rows.append(row(path.name, blocking, background, session.graph))
            sys.stderr.write(
                f"{part}: {path.name} ({blocking.seconds:.1f} s / {background.seconds:.1f} s)\n"
            )
        how = (
            "simulated on the log's clock"
            if part == "replay"
            else f"an async summarizer sleeping {args.latency * args.scale:.2f} s, time scaled by {args.scale}"
        )
        print_table(
            f"{part}: {args.window:,} window, {args.latency:g}-s summarizer ({how}), {args.provider} prices",
            rows,
        )
        total = _total(rows)
        missed = (
            missed or total.waits_below > 0 or total.violations > 0 or total.ratio > 1 + COST_SLACK
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
