"""Where a replay's time goes, in units of the floor: tokenizing, the reference tracker, fidelity, the rest.

    python bench/floor_split.py            # the real sessions beside the checkout (or bundled)
    python bench/floor_split.py DIR        # the sessions (.json, .jsonl) under DIR

The floor is every node's text tokenized once (as in bench/test_replay_bench.py). Over all
the sessions, the engine's turns and `replay` are each timed in CPU time (each session's best
of three, summed), with the time spent inside the tokenizer and inside
`ReferenceTracker.observe` apart: the two things that read every new text; and, for
`replay`, inside its fidelity measure (the history index, the reply's references, the
request's text and the measure itself). Then each session's own ratios, since the goal
holds for every session. docs/performance.md quotes the output.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

import ctxrules.engine.replay as replay_module
from ctxrules.commit import ContextItem
from ctxrules.dag import Session, branch
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.replay import llm_calls, replay
from ctxrules.fidelity import HistoryIndex, SentText
from ctxrules.generation import node_text
from ctxrules.importers import import_session
from ctxrules.rules import Pipeline, references
from ctxrules.spec import load_spec
from ctxrules.tokens import load_encoding
from ctxrules.tokens.usage import ProviderUsage

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = (ROOT.parent / "shared" / "data" / "sessions", ROOT / "ctxrules" / "data" / "sessions")
RULER = load_encoding("cl100k_base").unwrap()
SPENT: Counter[str] = Counter()
#: The parts being timed now: a call inside another of the same part is not timed twice.
INSIDE: set[str] = set()


class TimedRuler:
    """The ruler, with the seconds spent counting added to ``SPENT["tokenize"]``."""

    name = RULER.name
    message_overhead = RULER.message_overhead

    def count(self, text: str) -> int:
        """``RULER.count(text)``, timed."""
        started = time.process_time()
        tokens = RULER.count(text)
        SPENT["tokenize"] += time.process_time() - started
        return tokens


_observe = references.ReferenceTracker.observe


def timed_observe(
    self: references.ReferenceTracker, items: Iterable[ContextItem]
) -> references.ReferenceTracker:
    """``ReferenceTracker.observe``, timed; building the items it reads is not counted."""
    given = list(items)
    started = time.process_time()
    tracker = _observe(self, given)
    SPENT["tracker"] += time.process_time() - started
    return tracker


def timed(name: str, function: Callable[..., object]) -> Callable[..., object]:
    """``function``, with the seconds spent inside added to ``SPENT[name]`` (outermost call only)."""

    def timing(*args: object, **options: object) -> object:
        if name in INSIDE:
            return function(*args, **options)
        INSIDE.add(name)
        started = time.process_time()
        try:
            return function(*args, **options)
        finally:
            SPENT[name] += time.process_time() - started
            INSIDE.discard(name)

    return timing


def time_fidelity() -> None:
    """Time what `replay` calls of `ctxrules.fidelity` under ``SPENT["fidelity"]``."""
    for name in ("measure", "reply_references"):
        setattr(replay_module, name, timed("fidelity", getattr(replay_module, name)))
    for owner, name in (
        (HistoryIndex, "add_call"),
        (HistoryIndex, "add_summaries"),
        (SentText, "grown"),
    ):
        setattr(owner, name, timed("fidelity", getattr(owner, name)))


def floor_seconds(session: Session) -> float:
    """Seconds to tokenize every node's output and input once."""
    nodes = session.graph.nodes.values()
    texts = [node_text(c.output) for c in nodes] + [node_text(c.input) for c in nodes if c.input]
    started = time.process_time()
    for text in texts:
        RULER.count(text)
    return time.process_time() - started


def engine_turns(session: Session, engine: DefaultContextEngine) -> None:
    """``prepare`` and ``after_turn`` at every LLM call of the session."""
    calls = branch(session.graph, session.head)
    for before, call in llm_calls(session):
        live = Session(session.session_id, session.graph, calls[before].id)
        prep = engine.prepare(live, window=200_000, now=call.created_at).unwrap()
        engine.after_turn(session.session_id, ProviderUsage(prep.request_tokens), prep)


def best_of(runs: int, work: Callable[[], object]) -> tuple[float, Counter[str]]:
    """The least CPU seconds of ``runs`` runs of ``work``, with what that run spent inside."""
    best: tuple[float, Counter[str]] | None = None
    for _ in range(runs):
        SPENT.clear()
        started = time.process_time()
        work()
        total = time.process_time() - started
        if best is None or total < best[0]:
            best = (total, Counter(SPENT))
    assert best is not None
    return best


def run_one(label: str, session: Session, pipeline: Pipeline) -> None:
    """The engine's turns or a replay (fidelity on, as ``ctxrules replay`` runs it) of one session."""
    engine = DefaultContextEngine(pipeline=pipeline, tokenizer=TimedRuler())
    if label == "replay":
        replay(session, engine, window=200_000)
    else:
        engine_turns(session, engine)


def split(label: str, total: float, spent: Counter[str], floor: float) -> str:
    """One line: ``total`` and its parts in units of ``floor``."""
    rest = total - spent["tokenize"] - spent["tracker"] - spent["fidelity"]
    fidelity = f" + fidelity {spent['fidelity'] / floor:.2f}" if spent["fidelity"] else ""
    return (
        f"{label}: {total / floor:.2f}x the floor = tokenizing {spent['tokenize'] / floor:.2f}"
        f" + reference tracker {spent['tracker'] / floor:.2f}{fidelity}"
        f" + the rest {rest / floor:.2f}\n"
    )


def fit(requests: list[int], floors: list[float], seconds: list[float]) -> tuple[float, float]:
    """Least squares of ``seconds = a * requests + b * floor`` over the sessions: (a, b).

    ``a`` is what each request costs whatever its text, ``b`` what the text costs in floors.
    """
    rr = sum(r * r for r in requests)
    rf = sum(r * f for r, f in zip(requests, floors, strict=True))
    ff = sum(f * f for f in floors)
    rs = sum(r * t for r, t in zip(requests, seconds, strict=True))
    fs = sum(f * t for f, t in zip(floors, seconds, strict=True))
    det = rr * ff - rf * rf
    return (rs * ff - fs * rf) / det, (fs * rr - rs * rf) / det


def main(argv: list[str]) -> int:
    """Print each part of the engine's turns and of replay as a multiple of the floor, in all and per session."""
    folders = [Path(argv[0])] if argv else list(FOLDERS)
    folder = next((f for f in folders if f.is_dir()), None)
    paths = (
        sorted(p for p in folder.rglob("*") if p.suffix in {".json", ".jsonl"}) if folder else []
    )
    if not paths:
        sys.stderr.write("no sessions found\n")
        return 1
    sessions = [import_session(p, skip_bad=True).unwrap().session for p in paths]
    pipeline = load_spec(ROOT / "specs" / "default.toml").unwrap()
    references.ReferenceTracker.observe = timed_observe  # type: ignore[method-assign]
    time_fidelity()
    # Each session apart, best of three: the totals are the sums of the sessions' bests.
    floors = [best_of(3, lambda s=s: floor_seconds(s))[0] for s in sessions]
    labels = ("engine turns", "replay")
    runs = {
        label: [best_of(3, lambda s=s, label=label: run_one(label, s, pipeline)) for s in sessions]
        for label in labels
    }
    floor = sum(floors)
    sys.stdout.write(f"{len(sessions)} sessions, floor {floor * 1000:.0f} ms\n")
    for label in labels:
        total = sum(seconds for seconds, _ in runs[label])
        spent = sum((parts for _, parts in runs[label]), Counter[str]())
        sys.stdout.write(split(label, total, spent, floor))
    sys.stdout.write("per session (floor ms; engine turns, replay in floors):\n")
    for path, alone, engine, replayed in zip(
        paths, floors, runs["engine turns"], runs["replay"], strict=True
    ):
        sys.stdout.write(
            f"  {path.name}: floor {alone * 1000:.1f} ms; engine {engine[0] / alone:.2f}x;"
            f" replay {replayed[0] / alone:.2f}x\n"
        )
    worst = max(r[0] / f for r, f in zip(runs["replay"], floors, strict=True))
    sys.stdout.write(f"worst session's replay: {worst:.2f}x its floor\n")
    requests = [sum(1 for _ in llm_calls(s)) for s in sessions]
    for label in labels:
        each, per_floor = fit(requests, floors, [seconds for seconds, _ in runs[label]])
        sys.stdout.write(
            f"{label} over the sessions: {each * 1000:.2f} ms a request + {per_floor:.2f}x the"
            " floor (least squares)\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
