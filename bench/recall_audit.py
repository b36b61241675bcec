"""Recall audit of the real sessions: invariant 16 and the cost of handles, at 32k and 200k.

    python bench/recall_audit.py                      # every session in ../shared/data/sessions
    python bench/recall_audit.py --baseline 8123875   # cost against that commit's code (no handles)
    python bench/recall_audit.py --spec specs/x.toml PATH ...

Each session is replayed through the spec at each window. The recall audit counts the
hidden items recovered byte for byte, the handles shown and unresolved, and the recall
results a model that recalls every shown handle needs. It also searches (the session's
full-text index, as `search_history` does) for each hidden item with words from the middle
of its original, recalls every handle returned, and counts the items found and the errors. The cost is compared with a
baseline: with ``--baseline REV``, the same replay run by the code of that git revision
(extracted to a temporary folder; the honest "before handles" figure); without it, this
code with ``handles`` false on every built-in rule (summaries still list what they fold).
The exit status is 1 if any audit fails or the total cost grows by more than 3 %.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = ROOT.parent / "shared" / "data" / "sessions"
WINDOWS = (32_000, 200_000)
LIMIT = 0.03


def _structural(_: object) -> str:
    raise RuntimeError("the audit uses the structural summary")


def without_handles() -> Mapping[str, Any]:
    """The built-in rules with ``handles`` false by default (this code's in-tree baseline)."""
    import attrs  # noqa: PLC0415 - only this mode needs it

    from ctxrules.rules import builtins  # noqa: PLC0415

    return {
        name: attrs.evolve(
            rule,
            params=tuple(
                attrs.evolve(p, default=False) if p.name == "handles" else p for p in rule.params
            ),
        )
        for name, rule in builtins().items()
    }


def replayed(
    path: Path, spec_text: str, window: int, registry: Any = None
) -> tuple[float, Any, Any]:
    """Replay one session; its cache-weighted cost, the session and the engine."""
    from ctxrules.cli.replay_report import totals  # noqa: PLC0415 - run by old code too
    from ctxrules.engine import DefaultContextEngine  # noqa: PLC0415
    from ctxrules.engine.replay import replay  # noqa: PLC0415
    from ctxrules.importers import import_session  # noqa: PLC0415
    from ctxrules.spec import load_spec  # noqa: PLC0415
    from ctxrules.tokens import default_tokenizer  # noqa: PLC0415

    session = import_session(path, skip_bad=True).unwrap().session
    pipeline = load_spec(spec_text, **({"registry": registry} if registry else {})).unwrap()
    engine = DefaultContextEngine(
        pipeline=pipeline, summarizer=_structural, tokenizer=default_tokenizer()
    )
    requests = replay(session, engine, window=window)
    return totals(requests)["cost"], session, engine


def audit(session: Any, engine: Any) -> Any:
    """The recall audit of a replayed session, from the engine's commits, searches included."""
    from ctxrules.engine.recall import memory_search  # noqa: PLC0415 - absent in old code
    from ctxrules.recall.audit import audit_commits  # noqa: PLC0415

    commits = engine.states[session.session_id].by_id.values()
    with memory_search(session) as search:
        return audit_commits(session.graph, commits, tokenizer=engine.tokenizer, search=search)


def baseline_costs(rev: str, paths: list[Path], spec: Path) -> dict[str, float]:
    """Costs of every run by the code of git revision ``rev``, run in a subprocess."""
    with tempfile.TemporaryDirectory() as folder:
        # The arguments are this script's own, not outside input.
        archive = subprocess.run(  # noqa: S603
            ["git", "-C", str(ROOT), "archive", rev, "ctxrules"],  # noqa: S607 - git on PATH
            check=True,
            capture_output=True,
        )
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)  # noqa: S603, S607
        command = [sys.executable, __file__, "--costs-only", "--spec", str(spec), *map(str, paths)]
        env = {**os.environ, "PYTHONPATH": folder}
        done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)  # noqa: S603
    return json.loads(done.stdout)


def say(line: str) -> None:
    """One line to standard output, at once (a run takes minutes)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _key(path: Path, window: int) -> str:
    return f"{path.name}@{window}"


def main(argv: list[str] | None = None) -> int:
    """Print the audit and the cost comparison for every session and window."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--spec", type=Path, default=ROOT / "specs" / "default.toml")
    parser.add_argument("--baseline", default=None, help="git revision whose code is the baseline")
    parser.add_argument("--costs-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    paths = args.paths or sorted(p for p in SESSIONS.rglob("*.json*") if p.is_file())
    if not paths:
        sys.stderr.write(f"no sessions found under {SESSIONS}\n")
        return 2
    spec = args.spec.read_text(encoding="utf-8")
    if args.costs_only:
        costs = {_key(p, w): replayed(p, spec, w)[0] for p in paths for w in WINDOWS}
        say(json.dumps(costs))
        return 0
    before = baseline_costs(args.baseline, paths, args.spec) if args.baseline else None
    registry = None if before is not None else without_handles()
    failed = False
    grand = {"on": 0.0, "off": 0.0}
    say(
        "session | window | hidden recovered | shown | unresolved | recall results | errors "
        "| inv16 | found by search | search results | search errors "
        "| cost on | cost baseline | change"
    )
    for path in paths:
        for window in WINDOWS:
            cost_on, session, engine = replayed(path, spec, window)
            found = audit(session, engine)
            cost_off = (
                before[_key(path, window)]
                if before is not None
                else replayed(path, spec, window, registry)[0]
            )
            change = (cost_on - cost_off) / cost_off if cost_off else 0.0
            grand["on"] += cost_on
            grand["off"] += cost_off
            failed |= not found.ok
            say(
                f"{path.name} | {window} | {found.recovered}/{found.hidden} | {found.shown} | "
                f"{found.unresolved} | {found.recall_results} | {found.errors} | "
                f"{len(found.violations)} | {found.found_by_search}/{found.searches} | "
                f"{found.search_results} | {found.search_errors} | "
                f"{cost_on:,.0f} | {cost_off:,.0f} | {change:+.2%}"
            )
            for violation in found.violations[:5]:
                say(f"    {violation}")
    total = (grand["on"] - grand["off"]) / grand["off"] if grand["off"] else 0.0
    say(
        f"all sessions: cost with handles {grand['on']:,.0f}, baseline {grand['off']:,.0f} "
        f"({total:+.2%})"
    )
    return 1 if failed or total > LIMIT else 0


if __name__ == "__main__":
    raise SystemExit(main())
