"""Run every benchmark and print the scaling, peer and replay tables (docs/performance.md).

    python bench/run.py                   # the full run, a few minutes
    python bench/run.py -k turn           # extra arguments go to pytest
    python bench/run.py --json run.json   # keep pytest-benchmark's JSON
    python bench/run.py --from-json run.json   # print the tables of an earlier run

Figures are medians. The exit status is pytest's, or 1 with ``--fail-on-miss`` when a
goal is missed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SIZES = (1_000, 10_000, 100_000)
X = "\N{MULTIPLICATION SIGN}"
PER_TURN = (
    ("context_openai", "Context turn: add 3 messages, openai()"),
    ("context_aopenai", "Context turn: add 3 messages, await aopenai()"),
    ("prepare_openai", "prepare + to_openai, 200k window, with compaction"),
    ("prepare_openai_full", "prepare + to_openai, no compaction (all sent)"),
    ("turn_core", "ctxrules core: generate_commit + default pipeline"),
    ("turn_render", "ctxrules turn: core + render_commit"),
    ("trim_messages", "LangChain trim_messages (strategy last)"),
    ("naive_recount", "naive: recount every message"),
)
COMPONENTS = (
    ("dag_append", "Graph.append, one node"),
    ("dag_build", f"Graph.append {X} size (whole graph)"),
    ("session_send", "Session.send, one turn"),
    ("generate", "generate_commit, no rules"),
    ("pipeline", "default pipeline, one turn"),
    ("render", "render_commit"),
    ("to_openai", "to_openai"),
    ("to_anthropic", "to_anthropic"),
    ("find_cut_index", "find_cut_index (200k window)"),
)
SPEEDUP_GOAL, SCALING_GOAL, FLOOR_GOAL, MEMORY_GOAL = 1_000.0, 2.0, 2.0, 3.0
#: A `Context` turn at 100k messages over the turn at 1k.
CONTEXT_SCALING_GOAL = 1.5

Figures = dict[tuple[str, object], dict[str, Any]]


def run_pytest(json_path: Path, pytest_args: Sequence[str]) -> int:
    """Run the benchmarks (timed, not the smoke run) and write their JSON."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "bench",
        "--benchmark-enable",
        f"--benchmark-json={json_path}",
        "--benchmark-columns=min,median,mean,max,rounds",
        "--benchmark-sort=name",
        "-q",
        # Timed in one process: the suite's addopts spread tests over xdist workers, and
        # pytest-benchmark (rightly) disables timing when they are on.
        "--numprocesses=0",
        "--dist=no",
        *pytest_args,
    ]
    return subprocess.run(command, cwd=ROOT, check=False).returncode  # noqa: S603 - our own interpreter


def figures(data: dict[str, Any]) -> Figures:
    """Each benchmark by (kind, size) or (kind, session), from the extra_info it recorded."""
    found: Figures = {}
    for bench in data.get("benchmarks", []):
        info = bench.get("extra_info", {})
        if "kind" in info:
            key = info.get("session", info.get("size"))
            stats = bench["stats"]
            found[info["kind"], key] = {**info, "median": stats["median"], "mean": stats["mean"]}
    return found


def seconds(value: float | None) -> str:
    """A duration with a unit that keeps three significant digits."""
    if value is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"


def times(ratio: float | None) -> str:
    """A ratio: three significant digits below 100, whole numbers with commas above."""
    if ratio is None:
        return "—"
    return f"{ratio:,.0f}{X}" if ratio >= 100 else f"{ratio:.3g}{X}"


def div(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def median(found: Figures, kind: str, key: object, stat: str = "median") -> float | None:
    entry = found.get((kind, key))
    return entry[stat] if entry else None


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table, padded so it also reads well in a terminal."""
    rows = [list(header), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def by_size(
    found: Figures, kinds: Sequence[tuple[str, str]], first: str, stat: str = "median"
) -> str:
    rows = []
    for kind, label in kinds:
        values = [median(found, kind, size, stat) for size in SIZES]
        if any(v is not None for v in values):
            rows.append([label, *map(seconds, values), times(div(values[-1], values[0]))])
    return table([first, "1k items", "10k items", "100k items", "100k ÷ 1k"], rows)


def speedups(found: Figures) -> str:
    context = median(found, "context_openai", 10_000)
    user = median(found, "prepare_openai", 10_000)
    core = median(found, "turn_core", 10_000)
    rows = [
        [
            label,
            times(div(median(found, kind, 10_000), context)),
            times(div(median(found, kind, 10_000), user)),
            times(div(median(found, kind, 10_000), core)),
        ]
        for kind, label in PER_TURN
        if kind in {"trim_messages", "naive_recount"}
    ]
    header = [
        "at 10k items, peer ÷ ctxrules",
        "vs Context turn",
        "vs prepare + to_openai",
        "vs core",
    ]
    return table(header, rows)


def memory(found: Figures) -> tuple[str, float | None]:
    """All commits of a session over its last one, by session length; the longest's ratio."""
    runs = sorted((turns, info) for (kind, turns), info in found.items() if kind == "commit_memory")
    rows = [
        [
            f"{turns:,} turns",
            f"{info['all_bytes'] / 1e6:.1f} MB",
            f"{info['last_bytes'] / 1e6:.1f} MB",
            times(info["ratio"]),
        ]
        for turns, info in runs
    ]
    header = ["session", "all commits", "last commit", "all ÷ last"]
    return table(header, rows), runs[-1][1]["ratio"] if runs else None


def replays(found: Figures) -> tuple[str, list[float], list[float]]:
    sessions = sorted(key for kind, key in found if kind == "floor")
    rows, ratios, engine_ratios = [], [], []
    for session in sessions:
        info = found["floor", session]
        floor = info["median"]
        replayed, engine = median(found, "replay", session), median(found, "engine", session)
        ratio, engine_ratio = div(replayed, floor), div(engine, floor)
        ratios += [ratio] if ratio is not None else []
        engine_ratios += [engine_ratio] if engine_ratio is not None else []
        rows.append(
            [
                str(session),
                f"{info['requests']}",
                f"{info['tokens']:,}",
                seconds(floor),
                seconds(replayed),
                times(ratio),
                seconds(engine),
                times(engine_ratio),
            ]
        )
    header = [
        "session",
        "requests",
        "tokens",
        "floor",
        "replay",
        "÷ floor",
        "engine turns",
        "÷ floor",
    ]
    return table(header, rows), ratios, engine_ratios


def goals(
    found: Figures, ratios: list[float], engine_ratios: list[float], memory_ratio: float | None
) -> tuple[str, bool]:
    """The issue's goals, each figure beside it, and whether all were met."""
    trim = median(found, "trim_messages", 10_000)

    def scaling(kind: str) -> float | None:
        return div(median(found, kind, 100_000), median(found, kind, 1_000))

    checks: list[tuple[str, float | None, Callable[[float], bool]]] = [
        (
            f"≥ 1,000{X} over trim_messages at 10k, Context turn (openai)",
            div(trim, median(found, "context_openai", 10_000)),
            lambda r: r >= SPEEDUP_GOAL,
        ),
        (
            f"≤ 1.5{X} per turn 1k → 100k, Context turn (openai)",
            scaling("context_openai"),
            lambda r: r <= CONTEXT_SCALING_GOAL,
        ),
        (
            f"≤ 1.5{X} per turn 1k → 100k, Context turn (aopenai)",
            scaling("context_aopenai"),
            lambda r: r <= CONTEXT_SCALING_GOAL,
        ),
        (
            f"≥ 1,000{X} over trim_messages at 10k, prepare + to_openai",
            div(trim, median(found, "prepare_openai", 10_000)),
            lambda r: r >= SPEEDUP_GOAL,
        ),
        (
            f"≤ 2{X} per turn 1k → 100k, prepare + to_openai, with compaction",
            scaling("prepare_openai"),
            lambda r: r <= SCALING_GOAL,
        ),
        (
            "(stated) per turn 1k → 100k, prepare + to_openai, no compaction",
            scaling("prepare_openai_full"),
            lambda _: True,
        ),
        (f"≤ 2{X} per turn 1k → 100k, core", scaling("turn_core"), lambda r: r <= SCALING_GOAL),
        (
            f"replay ≤ 2{X} floor, worst session",
            max(ratios, default=None),
            lambda r: r <= FLOOR_GOAL,
        ),
        (
            f"engine turns ≤ 2{X} floor, worst session",
            max(engine_ratios, default=None),
            lambda r: r <= FLOOR_GOAL,
        ),
        (
            f"all commits ≤ 3{X} the last one, longest session",
            memory_ratio,
            lambda r: r <= MEMORY_GOAL,
        ),
    ]
    rows, all_met = [], True
    for label, value, ok in checks:
        met = None if value is None else ok(value)
        all_met = all_met and met is not False
        status = {None: "not run", True: "met", False: "MISSED"}[met]
        rows.append([label, times(value), "stated" if label.startswith("(") and met else status])
    return table(["goal", "figure", "status"], rows), all_met


def report(data: dict[str, Any]) -> tuple[str, bool]:
    """All the tables of one run, and whether every goal that ran was met."""
    found = figures(data)
    machine = data.get("machine_info", {})
    cpu = machine.get("cpu", {})
    replay_table, ratios, engine_ratios = replays(found)
    memory_table, memory_ratio = memory(found)
    goal_table, met = goals(found, ratios, engine_ratios, memory_ratio)
    parts = [
        (
            f"Machine: {cpu.get('brand_raw', '?')}, {cpu.get('count', '?')} cores, "
            f"{machine.get('python_implementation', 'Python')} {machine.get('python_version', '?')}; "
            "figures are medians unless marked mean."
        ),
        "Per turn on a history of N items (one turn adds 3 items):\n\n"
        + by_size(found, PER_TURN, "per turn"),
        "The same, means (they include the cyclic GC's occasional full collections):\n\n"
        + by_size(found, PER_TURN[:3], "per turn, mean", "mean"),
        speedups(found),
        "Components:\n\n" + by_size(found, COMPONENTS, "component"),
        "Replay of real sessions at a 200k window (floor: all text tokenized once):\n\n"
        + replay_table,
        "Memory held by the commits of a session (tracemalloc):\n\n" + memory_table,
        goal_table,
    ]
    return "\n\n".join(parts), met


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks (or read an earlier run) and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="keep pytest-benchmark's JSON in this file")
    parser.add_argument("--from-json", type=Path, help="print the tables of this earlier run")
    parser.add_argument("--fail-on-miss", action="store_true", help="exit 1 when a goal is missed")
    args, pytest_args = parser.parse_known_args(argv)
    status = 0
    if args.from_json is not None:
        path = args.from_json
    else:
        path = args.json or Path(tempfile.mkdtemp(prefix="ctxrules-bench-")) / "run.json"
        status = run_pytest(path.resolve(), pytest_args)
        if not path.exists():
            return status or 1
    text, met = report(json.loads(path.read_text(encoding="utf-8")))
    sys.stdout.write("\n" + text + "\n")
    if args.fail_on_miss and not met:
        return status or 1
    return status


if __name__ == "__main__":
    sys.exit(main())
