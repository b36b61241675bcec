"""Replay every real session through a spec and print the cache-weighted figures (docs/replay.md).

    python bench/cache_replay.py                        # default spec, anthropic, 32k and 200k
    python bench/cache_replay.py --provider openai --windows 200000
    python bench/cache_replay.py --spec specs/small-window.toml --sessions DIR ...
    python bench/cache_replay.py --against a.toml b.toml # also the totals of those specs
    python bench/cache_replay.py --json out.json         # every row and total as JSON too
    python bench/cache_replay.py --against bench/compaction-only.toml --plot tradeoff.html

Each session is replayed as ``ctxrules replay PATH --window W --provider P`` would; the
table shows per session and in total the cost against the naive resend, the share of
requests that purely extend the previous one, the requests over the window, orphan tool
pairs and snips, and the fidelity (docs/replay.md#fidelity): the references the recorded
model used next that were visible in the request, one recall away, deeper or lost, the
recalls needed, and the share of requests naming every file written so far. The exit
status is 1 when a goal of the cache contract or of fidelity is missed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs

from ctxrules.cache import PROFILES
from ctxrules.commit import ContextCommit
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.replay import Request, replay
from ctxrules.importers import import_session
from ctxrules.spec import load_spec
from ctxrules.spec.recall import recall_options
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
    references: int = 0
    visible: int = 0
    one_recall: int = 0
    deeper: int = 0
    lost: int = 0
    round_trips: int = 0
    trail_named: int = 0
    #: Hidden references by ``reach: state/reason`` of the item their first tool result is in.
    hidden_by: dict[str, int] = attrs.field(factory=dict)

    @property
    def ratio(self) -> float:
        """Cost as a share of the naive resend's."""
        return self.cost / self.naive_cost if self.naive_cost else 1.0

    def to_json(self) -> dict[str, object]:
        """The row as plain JSON, its ratio included."""
        return {**attrs.asdict(self), "ratio": self.ratio}


#: The cost goal, as a share of the naive resend's, at each window (issue 29).
COST_GOAL = 0.40

#: The fidelity counts a row sums (`ctxrules.fidelity.Fidelity`'s fields).
FIDELITY = ("references", "visible", "one_recall", "deeper", "lost", "round_trips")


def _share(part: float, whole: float) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def total(rows: Sequence[Row]) -> dict[str, float]:
    """The sums of a group of rows, with cost ÷ naive and the shares the goals are about."""
    sums: dict[str, float] = {
        key: float(sum(getattr(r, key) for r in rows))
        for key in ("requests", "cost", "naive_cost", "extensions", "trail_named", *FIDELITY)
    }
    refs, requests = sums["references"], sums["requests"]
    return {
        **sums,
        "sessions": len(rows),
        "ratio": sums["cost"] / sums["naive_cost"] if sums["naive_cost"] else 1.0,
        "extension_share": sums["extensions"] / requests if requests else 0.0,
        "visible_share": sums["visible"] / refs if refs else 1.0,
        "one_recall_share": sums["one_recall"] / refs if refs else 0.0,
        "deeper_share": sums["deeper"] / refs if refs else 0.0,
        "lost_share": sums["lost"] / refs if refs else 0.0,
        "trail_share": sums["trail_named"] / requests if requests else 1.0,
        "dearer": sum(1 for r in rows if r.ratio > 1),
    }


def session_files(folders: Sequence[Path]) -> list[Path]:
    """Every recorded session under ``folders``, sorted."""
    return sorted(
        p for folder in folders for p in folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES
    )


def measure(path: Path, spec: Path, window: int, provider: str) -> Row:
    """Replay one session and gather its figures."""
    session = import_session(path, skip_bad=True).unwrap().session
    engine = DefaultContextEngine(pipeline=load_spec(spec).unwrap(), tokenizer=default_tokenizer())
    search = recall_options(spec).unwrap().tools
    commits: list[ContextCommit] = []
    prepare = engine.prepare

    def recording(*args: object, **kwargs: object) -> object:
        # The commit of each request, to say which item hid each hidden reference.
        result = prepare(*args, **kwargs)  # type: ignore[arg-type]
        commits.append(result.unwrap().commit)
        return result

    engine.prepare = recording  # type: ignore[method-assign]
    requests = replay(session, engine, window=window, profile=PROFILES[provider], search=search)
    row = _row(path.name, window, requests)
    return attrs.evolve(row, hidden_by=_hidden_by(requests, commits))


def _hidden_by(requests: Sequence[Request], commits: Sequence[ContextCommit]) -> dict[str, int]:
    found: dict[str, int] = {}
    for request, commit in zip(requests, commits, strict=True):
        for hidden in request.fidelity.hidden:
            at = commit.index_of(hidden.source_id)
            item = commit.items[at] if at is not None else None
            where = f"{item.state.value}/{item.reason}" if item is not None else "not in the commit"
            key = f"{hidden.reach.value}: {where}"
            found[key] = found.get(key, 0) + 1
    return found


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
        *(sum(getattr(r.fidelity, key) for r in requests) for key in FIDELITY),
        trail_named=sum(1 for r in requests if r.fidelity.trail_named),
    )


def table(rows: Sequence[Row]) -> str:
    """A Markdown table of the rows plus a total line per window."""
    lines = [
        (
            "| session | window | requests | cost / naive | extensions | over window | orphans "
            "| snips (for the summary) | compactions | references | visible | one recall "
            "| deeper | lost | recalls | trail named | prefix breaks by cause |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        causes = ", ".join(f"{k} {v}" for k, v in sorted(row.breaks.items())) or "-"
        lines.append(
            f"| {row.session} | {row.window:,} | {row.requests} | {row.ratio:.2f} "
            f"| {row.extensions / max(row.requests, 1):.0%} | {row.over_window} | {row.orphans} "
            f"| {row.snips} ({row.summary_snips}) | {row.compactions} | {row.references} "
            f"| {_share(row.visible, row.references)} | {_share(row.one_recall, row.references)} "
            f"| {_share(row.deeper, row.references)} | {_share(row.lost, row.references)} "
            f"| {row.round_trips} | {_share(row.trail_named, row.requests)} | {causes} |"
        )
    for window in sorted({r.window for r in rows}):
        group = [r for r in rows if r.window == window]
        t = total(group)
        lines.append(
            f"| **all {len(group)}** | {window:,} | {t['requests']:.0f} | **{t['ratio']:.2f}** "
            f"| {t['extension_share']:.0%} "
            f"| {sum(r.over_window for r in group)} | {sum(r.orphans for r in group)} "
            f"| {sum(r.snips for r in group)} ({sum(r.summary_snips for r in group)}) "
            f"| {sum(r.compactions for r in group)} | {t['references']:.0f} "
            f"| **{t['visible_share']:.1%}** | {t['one_recall_share']:.1%} "
            f"| {t['deeper_share']:.1%} | {t['lost_share']:.1%} | {t['round_trips']:.0f} "
            f"| {t['trail_share']:.1%} | dearer than naive: {t['dearer']} |"
        )
    return "\n".join(lines)


def summary_table(runs: Sequence[tuple[str, Sequence[Row]]]) -> str:
    """One line per spec and window: the totals the issue's goals are stated in."""
    lines = [
        (
            "| spec | window | cost ÷ naive | visible | one recall | deeper | lost | recalls "
            "| trail named | extensions |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, rows in runs:
        for window in sorted({r.window for r in rows}):
            t = total([r for r in rows if r.window == window])
            lines.append(
                f"| {name} | {window:,} | {t['ratio']:.3f} | {t['visible_share']:.1%} "
                f"| {t['one_recall_share']:.1%} | {t['deeper_share']:.1%} "
                f"| {t['lost_share']:.1%} | {t['round_trips']:.0f} | {t['trail_share']:.1%} "
                f"| {t['extension_share']:.1%} |"
            )
    return "\n".join(lines)


def missed(rows: Sequence[Row]) -> list[str]:
    """The goals of the cache contract a run misses, as sentences."""
    problems = [f"{r.session} at {r.window:,}: {r.ratio:.2f}x naive" for r in rows if r.ratio > 1]
    for window in sorted({r.window for r in rows}):
        group = [r for r in rows if r.window == window]
        ratio = sum(r.cost for r in group) / max(sum(r.naive_cost for r in group), 1)
        share = sum(r.extensions for r in group) / max(sum(r.requests for r in group), 1)
        if ratio > COST_GOAL:
            problems.append(f"total at {window:,}: {ratio:.3f}x naive (goal {COST_GOAL})")
        if share < 0.85:
            problems.append(f"extensions at {window:,}: {share:.0%} (goal 85 %)")
        t = total(group)
        if t["visible_share"] < 0.95:
            problems.append(f"visible at {window:,}: {t['visible_share']:.1%} (goal 95 %)")
        if t["lost"]:
            problems.append(f"lost at {window:,}: {t['lost']:.0f} references (goal 0)")
        if t["trail_share"] < 1:
            problems.append(f"trail named at {window:,}: {t['trail_share']:.1%} (goal 100 %)")
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
    parser.add_argument(
        "--against", type=Path, nargs="+", default=[], help="one or more specs to compare with"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write rows and totals here")
    parser.add_argument(
        "--plot", type=Path, default=None, help="write a cost-against-fidelity plot (HTML) here"
    )
    args = parser.parse_args(argv)
    files = session_files([f for f in args.sessions if f.exists()])
    if not files:
        sys.stderr.write("no sessions found\n")
        return 2
    runs = [(args.spec.name, _run(files, args.spec, args.windows, args.provider))]
    rows = runs[0][1]
    sys.stdout.write(table(rows) + "\n")
    for against in args.against:
        other = _run(files, against, args.windows, args.provider)
        runs.append((against.name, other))
        for window in args.windows:
            mine = sum(r.cost for r in rows if r.window == window)
            theirs = sum(r.cost for r in other if r.window == window)
            change = (mine - theirs) / theirs if theirs else 0.0
            sys.stdout.write(
                f"cost at {window:,}: {mine:,.0f} with {args.spec.name}, {theirs:,.0f} with "
                f"{against.name} ({change:+.2%})\n"
            )
    sys.stdout.write("\n" + summary_table(runs) + "\n")
    sys.stdout.write("\n" + hidden_table(runs) + "\n")
    if args.json is not None:
        args.json.write_text(json.dumps(_json(runs), indent=1) + "\n", encoding="utf-8")
    if args.plot is not None:
        _plot(runs, args.plot)
    problems = missed(rows)
    for problem in problems:
        sys.stdout.write(f"missed: {problem}\n")
    return 1 if problems else 0


def hidden_table(runs: Sequence[tuple[str, Sequence[Row]]]) -> str:
    """Where the references not visible were: reach, then the state and reason of their item."""
    lines = ["| spec | window | hidden reference: reach, item state/reason | count | of all |"]
    lines.append("|---|---:|---|---:|---:|")
    for name, rows in runs:
        for window in sorted({r.window for r in rows}):
            group = [r for r in rows if r.window == window]
            refs = sum(r.references for r in group)
            counts: dict[str, int] = {}
            for row in group:
                for key, count in row.hidden_by.items():
                    counts[key] = counts.get(key, 0) + count
            lines.extend(
                f"| {name} | {window:,} | {key} | {count} | {_share(count, refs)} |"
                for key, count in sorted(counts.items(), key=lambda kv: -kv[1])
            )
    return "\n".join(lines)


def _run(files: Sequence[Path], spec: Path, windows: Sequence[int], provider: str) -> list[Row]:
    rows = []
    for window in windows:
        for path in files:
            rows.append(measure(path, spec, window, provider))
            sys.stderr.write(f"{spec.name}: {path.name} at {window:,}: {rows[-1].ratio:.2f}\n")
    return rows


def _json(runs: Sequence[tuple[str, Sequence[Row]]]) -> list[dict[str, object]]:
    return [
        {
            "spec": name,
            "rows": [r.to_json() for r in rows],
            "totals": {
                str(w): total([r for r in rows if r.window == w])
                for w in sorted({r.window for r in rows})
            },
        }
        for name, rows in runs
    ]


def _plot(runs: Sequence[tuple[str, Sequence[Row]]], path: Path) -> None:
    """Each spec at each window as a point: cost ÷ naive against the references visible."""
    from ctxrules.cli.replay_report import cost_fidelity_figure  # noqa: PLC0415 - needs plotly

    points: list[dict[str, float | str]] = [
        {"label": "naive resend", "cost_ratio": 1.0, "visible": 1.0, "reachable": 1.0}
    ]
    for name, rows in runs:
        for window in sorted({r.window for r in rows}):
            t = total([r for r in rows if r.window == window])
            points.append(
                {
                    "label": f"{name} {window // 1000}k",
                    "cost_ratio": t["ratio"],
                    "visible": t["visible_share"],
                    "reachable": t["visible_share"] + t["one_recall_share"],
                }
            )
    figure = cost_fidelity_figure(points, "cost against fidelity, every session in total")
    path.write_text(figure.to_html(include_plotlyjs=True, full_html=True), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
