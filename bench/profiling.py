"""Profile one benchmarked workload with cProfile, and time the cyclic GC inside it.

    python bench/profiling.py turn --size 10000     # generate + render, repeated
    python bench/profiling.py core --size 10000     # generate (default pipeline), repeated
    python bench/profiling.py graph --size 100000   # a graph built by appending, from empty
    python bench/profiling.py peer --size 10000     # one trim_messages call
    python bench/profiling.py replay PATH           # replay() of a recorded session
    python bench/profiling.py engine PATH           # prepare + after_turn at every LLM call

It prints the wall time, the time spent in GC collections (by generation), and the
functions with the most cumulative time. docs/performance.md quotes its output.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import pstats
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from ctxrules.dag import Call, Graph, Session, branch
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.replay import llm_calls, replay
from ctxrules.generation import generate_commit
from ctxrules.importers import import_session
from ctxrules.render import render_commit
from ctxrules.rules import Pipeline
from ctxrules.spec import load_spec
from ctxrules.tokens.usage import ProviderUsage

HERE = Path(__file__).resolve().parent


def fixtures() -> ModuleType:
    """bench/conftest.py as a module: the same histories, ruler and peer as the benchmarks."""
    spec = importlib.util.spec_from_file_location("ctxrules_bench_conftest", HERE / "conftest.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def gc_timer() -> Iterator[dict[int, list[float]]]:
    """Collections and seconds spent in the cyclic GC, by generation, while the block runs."""
    spent: dict[int, list[float]] = {0: [0, 0.0], 1: [0, 0.0], 2: [0, 0.0]}
    started = [0.0]

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            entry = spent[info["generation"]]
            entry[0] += 1
            entry[1] += time.perf_counter() - started[0]

    gc.callbacks.append(callback)
    try:
        yield spent
    finally:
        gc.callbacks.remove(callback)


Workload = tuple[str, Callable[[], object]]


def graph_workload(size: int) -> Workload:
    """A linear graph of ``size`` nodes appended one by one from empty."""
    nodes = [
        Call(f"n{i}", "user", output=f"m{i}", predecessor=f"n{i - 1}" if i else None)
        for i in range(size)
    ]

    def build() -> object:
        graph = Graph()
        for call in nodes:
            graph = graph.append(call).unwrap()
        return graph

    return f"a graph of {size} nodes appended one by one", build


def history_workload(args: argparse.Namespace, bench: ModuleType, pipeline: Pipeline) -> Workload:
    """Turns on the benchmarks' synthetic history (``turn``, ``core``), or one peer call."""
    with bench.gc_paused():
        history = bench.build_history(args.size, pipeline)
    if args.target == "peer":
        from langchain_core.messages import trim_messages  # noqa: PLC0415 - optional peer

        messages = history.peer_messages
        peer = bench.Peer(trim_messages)
        return f"trim_messages at {args.size} items", lambda: peer.trim(messages)

    def turns() -> object:
        for _ in range(args.repeat):
            child = generate_commit(
                history.ruled, history.graph, "a", pipeline, history.facts
            ).unwrap()
            if args.target == "turn":
                render_commit(child)
        return None

    what = "generate + render" if args.target == "turn" else "generate, default pipeline"
    return f"{args.repeat} turns ({what}) at {args.size} items", turns


def session_workload(args: argparse.Namespace, bench: ModuleType, pipeline: Pipeline) -> Workload:
    """``replay`` of a recorded session, or just the engine's turns over it (``engine``)."""
    recorded = import_session(args.path, skip_bad=True).unwrap().session

    def fresh() -> DefaultContextEngine:
        # The engine keeps each session's commits: every run starts from a new one.
        return DefaultContextEngine(pipeline=pipeline, tokenizer=bench.RULER)

    if args.target == "replay":
        return f"replay of {args.path}", lambda: replay(recorded, fresh(), window=200_000)

    def engine_turns() -> object:
        engine = fresh()
        calls = branch(recorded.graph, recorded.head)
        for before, call in llm_calls(recorded):
            live = Session(recorded.session_id, recorded.graph, calls[before].id)
            prep = engine.prepare(live, window=200_000, now=call.created_at).unwrap()
            engine.after_turn(recorded.session_id, ProviderUsage(prep.request_tokens), prep)
        return None

    return f"engine turns of {args.path}", engine_turns


def workload(args: argparse.Namespace) -> Workload:
    """The labelled function to profile, with its setup done."""
    if args.target == "graph":
        return graph_workload(args.size)
    bench = fixtures()
    pipeline = load_spec(bench.DEFAULT_SPEC).unwrap()
    if args.target in {"turn", "core", "peer"}:
        return history_workload(args, bench, pipeline)
    return session_workload(args, bench, pipeline)


def main(argv: Sequence[str] | None = None) -> int:
    """Profile the chosen workload and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", choices=["turn", "core", "graph", "peer", "replay", "engine"])
    parser.add_argument("path", nargs="?", help="a recorded session (replay, engine)")
    parser.add_argument("--size", type=int, default=10_000, help="history items or graph nodes")
    parser.add_argument("--repeat", type=int, default=20, help="turns to profile (turn, core)")
    parser.add_argument("--top", type=int, default=25, help="functions to list")
    args = parser.parse_args(argv)
    if args.target in {"replay", "engine"} and args.path is None:
        parser.error(f"{args.target} needs PATH, a recorded session")
    label, run = workload(args)
    started = time.perf_counter()
    run()  # a plain run first: the wall time without the profiler's overhead
    wall = time.perf_counter() - started
    profiler = cProfile.Profile()
    with gc_timer() as spent:
        started = time.perf_counter()
        run()
        gc_wall = time.perf_counter() - started
    gc_total = sum(seconds for _, seconds in spent.values())
    sys.stdout.write(
        f"{label}: {wall:.3f} s; a second run took {gc_wall:.3f} s, of which the cyclic GC"
        f" {gc_total:.3f} s ({', '.join(f'gen{g}: {n} in {s:.3f} s' for g, (n, s) in spent.items())})\n"
    )
    profiler.runcall(run)
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.strip_dirs().sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
