"""Replay every real session through a spec and print the cache-weighted figures (docs/replay.md).

    python bench/cache_replay.py                        # default spec, anthropic, 32k and 200k
    python bench/cache_replay.py --provider openai --windows 200000
    python bench/cache_replay.py --spec specs/small-window.toml --sessions DIR ...
    python bench/cache_replay.py --against other.toml   # also the total cost against that spec

Each session is replayed as ``ctxrules replay PATH --window W --provider P`` would; the
table shows per session and in total the cost against the naive resend, the share of
requests that purely extend the previous one, the requests over the window, orphan tool
pairs and snips. The exit status is 1 when a goal of the cache contract is missed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs

from ctxrules.cache import PROFILES
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.replay import Request, replay
from ctxrules.importers import import_session
from ctxrules.spec import load_spec
from ctxrules.tokens import default_tokenizer

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = (ROOT.parent / "shared" / "data" / "sessions", ROOT / "ctxrules" / "data" / "sessions")
SUFFIXES = (".jsonl", ".json")


@attrs.frozen
class Row:
    """One session at one window: the figures the cache contract is about."""

    session: str
    window: int
    requests: int
    cost: float
    naive_cost: float
    extensions: int
    over_window: int
    orphans: int
    snips: int
    summary_snips: int
    compactions: int
    breaks: dict[str, int]

    @property
    def ratio(self) -> float:
        """Cost as a share of the naive resend's."""
        return self.cost / self.naive_cost if self.naive_cost else 1.0


def session_files(folders: Sequence[Path]) -> list[Path]:
    """Every recorded session under ``folders``, sorted."""
    return sorted(
        p for folder in folders for p in folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES
    )


def measure(path: Path, spec: Path, window: int, provider: str) -> Row:
    """Replay one session and gather its figures."""
    session = import_session(path, skip_bad=True).unwrap().session
    engine = DefaultContextEngine(pipeline=load_spec(spec).unwrap(), tokenizer=default_tokenizer())
    requests = replay(session, engine, window=window, profile=PROFILES[provider])
    return _row(path.name, window, requests)


def _row(name: str, window: int, requests: list[Request]) -> Row:
    breaks: dict[str, int] = {}
    for r in requests:
        if r.cause is not None:
            breaks[r.cause] = breaks.get(r.cause, 0) + 1
    return Row(
        name,
        window,
        len(requests),
        sum(r.cost for r in requests),
        sum(r.naive_cost for r in requests),
        sum(1 for r in requests if r.extends),
        sum(1 for r in requests if r.sent > r.window),
        sum(r.protocol_violations for r in requests),
        sum(1 for r in requests if r.snipped),
        sum(1 for r in requests if r.snipped_for_summary),
        sum(1 for r in requests if r.compaction == "finished"),
        breaks,
    )


def table(rows: Sequence[Row]) -> str:
    """A Markdown table of the rows plus a total line per window."""
    lines = [
        "| session | window | requests | cost / naive | extensions | over window | orphans | snips (for the summary) | compactions | prefix breaks by cause |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        causes = ", ".join(f"{k} {v}" for k, v in sorted(row.breaks.items())) or "-"
        lines.append(
            f"| {row.session} | {row.window:,} | {row.requests} | {row.ratio:.2f} "
            f"| {row.extensions / max(row.requests, 1):.0%} | {row.over_window} | {row.orphans} "
            f"| {row.snips} ({row.summary_snips}) | {row.compactions} | {causes} |"
        )
    for window in sorted({r.window for r in rows}):
        group = [r for r in rows if r.window == window]
        cost, naive = sum(r.cost for r in group), sum(r.naive_cost for r in group)
        requests = sum(r.requests for r in group)
        lines.append(
            f"| **all {len(group)}** | {window:,} | {requests} | **{cost / naive:.2f}** "
            f"| {sum(r.extensions for r in group) / max(requests, 1):.0%} "
            f"| {sum(r.over_window for r in group)} | {sum(r.orphans for r in group)} "
            f"| {sum(r.snips for r in group)} ({sum(r.summary_snips for r in group)}) "
            f"| {sum(r.compactions for r in group)} "
            f"| dearer than naive: {sum(1 for r in group if r.ratio > 1)} |"
        )
    return "\n".join(lines)


def missed(rows: Sequence[Row]) -> list[str]:
    """The goals of the cache contract a run misses, as sentences."""
    problems = [f"{r.session} at {r.window:,}: {r.ratio:.2f}x naive" for r in rows if r.ratio > 1]
    for window in sorted({r.window for r in rows}):
        group = [r for r in rows if r.window == window]
        ratio = sum(r.cost for r in group) / max(sum(r.naive_cost for r in group), 1)
        share = sum(r.extensions for r in group) / max(sum(r.requests for r in group), 1)
        if ratio > 0.45:
            problems.append(f"total at {window:,}: {ratio:.2f}x naive (goal 0.45)")
        if share < 0.85:
            problems.append(f"extensions at {window:,}: {share:.0%} (goal 85 %)")
    problems += [
        f"{r.session} at {r.window:,}: {r.over_window} over the window"
        for r in rows
        if r.over_window
    ]
    problems += [f"{r.session} at {r.window:,}: {r.orphans} orphans" for r in rows if r.orphans]
    problems += [
        f"{r.session} at {r.window:,}: {r.summary_snips} snipped for the summary's size"
        for r in rows
        if r.summary_snips
    ]
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the arguments, replay, print the table and what was missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=ROOT / "specs" / "default.toml")
    parser.add_argument("--provider", choices=sorted(PROFILES), default="anthropic")
    parser.add_argument("--windows", type=int, nargs="+", default=[32_000, 200_000])
    parser.add_argument("--sessions", type=Path, nargs="+", default=list(SESSIONS))
    parser.add_argument("--against", type=Path, default=None, help="a spec to compare costs with")
    args = parser.parse_args(argv)
    files = session_files([f for f in args.sessions if f.exists()])
    if not files:
        sys.stderr.write("no sessions found\n")
        return 2
    rows = []
    for window in args.windows:
        for path in files:
            rows.append(measure(path, args.spec, window, args.provider))
            sys.stderr.write(f"{path.name} at {window:,}: {rows[-1].ratio:.2f}\n")
    sys.stdout.write(table(rows) + "\n")
    if args.against is not None:
        for window in args.windows:
            mine = sum(r.cost for r in rows if r.window == window)
            other = sum(measure(p, args.against, window, args.provider).cost for p in files)
            change = (mine - other) / other if other else 0.0
            sys.stdout.write(
                f"cost at {window:,}: {mine:,.0f} with {args.spec.name}, {other:,.0f} with "
                f"{args.against.name} ({change:+.2%})\n"
            )
    problems = missed(rows)
    for problem in problems:
        sys.stdout.write(f"missed: {problem}\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
