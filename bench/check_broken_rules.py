"""Time `ctxrules check` on the broken rules of tests/check at several seeds, and on the controls.

    python bench/check_broken_rules.py                  # the third round's table, seeds 1 2 3
    python bench/check_broken_rules.py --table all      # the first two rounds' tables too
    python bench/check_broken_rules.py --seeds 1 2 3 4 5

Each broken rule is searched as `ctxrules check` searches a spec's Python rule (200
examples, shrinking for up to 1,000 runs of the test, reruns on a fresh instance from its
factory); the row gives the invariant found at each seed and the slowest time (CPU seconds of this process).
The spec-level rows (a declarative template without ``{handle}``, a rule that follows
process state) and the two controls are checked as whole specs, children included. The
exit status is 1 when a rule is missed, caught with another invariant, takes over 30 s,
or a control is reported.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "check"))

import broken_rules  # noqa: E402 - lives in tests/check
import broken_rules_three  # noqa: E402
import correct_rules  # noqa: E402

from ctxrules.checker.runner import check_rule  # noqa: E402
from ctxrules.checker.spec_check import check_pipeline  # noqa: E402
from ctxrules.spec import load_spec  # noqa: E402

LIMIT_SECONDS = 30.0


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _timed(run: Callable[[], object]) -> tuple[object, float]:
    started = time.process_time()
    found = run()
    return found, time.process_time() - started


def _spec_check(text: str, seed: int, examples: int = 200) -> tuple[int | None, float]:
    folder = Path(tempfile.mkdtemp())
    spec = folder / "spec.toml"
    spec.write_text(text, encoding="utf-8")
    pipeline = load_spec(spec, allow_imports=True).unwrap()
    report, seconds = _timed(
        lambda: check_pipeline(spec, pipeline, examples=examples, seed=seed, allow_imports=True)
    )
    found = report.counterexample  # type: ignore[attr-defined]
    if found is None:
        return None, seconds
    return (found.violations[0].invariant if found.violations else -1), seconds


def main(argv: list[str] | None = None) -> int:
    """Print one row per broken rule and control; 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--table", choices=("three", "all"), default="three")
    args = parser.parse_args(argv)
    tables = [(broken_rules_three, broken_rules_three.BROKEN_THREE)]
    if args.table == "all":
        tables.insert(0, (broken_rules, broken_rules.BROKEN))
    failed = False
    _say(f"{'rule':<28} {'wanted':>6}  found at seeds {args.seeds}   slowest")
    for module, table in tables:
        for factory, wanted in table.items():
            make = getattr(module, factory)
            found_at: list[int | None] = []
            slowest = 0.0
            for seed in args.seeds:
                found, seconds = _timed(
                    lambda make=make, seed=seed, factory=factory: check_rule(
                        factory, make(), examples=200, seed=seed, fresh=make
                    )
                )
                invariant = found.violations[0].invariant if found and found.violations else None  # type: ignore[attr-defined]
                found_at.append(invariant)
                slowest = max(slowest, seconds)
            failed |= any(f != wanted for f in found_at) or slowest > LIMIT_SECONDS
            _say(f"{factory:<28} {wanted:>6}  {found_at!s:<22} {slowest:6.1f} s")
    spec_rows = {
        "no_handle_template (spec)": (broken_rules_three.NO_HANDLE_SPEC, 16),
        "warm_up_calls (spec)": (
            '[[rules]]\nuse = "broken_rules_three:warm_up_calls"\nname = "warm"\n',
            8,
        ),
        "controls (spec, must pass)": (correct_rules.CONTROLS_SPEC, None),
    }
    for label, (text, wanted) in spec_rows.items():
        results = [_spec_check(text, seed) for seed in args.seeds]
        found_at = [invariant for invariant, _ in results]
        slowest = max(seconds for _, seconds in results)
        failed |= any(f != wanted for f in found_at) or (
            wanted is not None and slowest > LIMIT_SECONDS
        )
        _say(f"{label:<28} {wanted!s:>6}  {found_at!s:<22} {slowest:6.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
