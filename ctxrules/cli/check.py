"""`ctxrules check SPEC`: load a spec and search for inputs on which its rules break an invariant."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, TextIO

from returns.result import Failure

from ctxrules.check import INVARIANT_NAMES
from ctxrules.cli.options import import_from_current_folder, missing_module, spec_source
from ctxrules.spec import load_spec

EXIT_OK, EXIT_VIOLATION, EXIT_SPEC = 0, 1, 2


def _progress(out: TextIO, done: int, total: int, label: str) -> None:
    if out.isatty():
        filled = int(24 * done / total)
        out.write(f"\r[{'#' * filled}{'.' * (24 - filled)}] {done}/{total} {label:<40}")
        if done == total:
            out.write("\n")
    else:
        out.write(f"checked {done}/{total}: {label}\n")
    out.flush()


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Check every rule of the spec and the whole pipeline; 0 clean, 1 violation, 2 bad spec."""
    spec_name = args.spec_option or args.spec
    if spec_name is None or (args.spec_option and args.spec and args.spec != args.spec_option):
        sys.stderr.write("ctxrules check: name one spec, as SPEC or --spec SPEC\n")
        return EXIT_SPEC
    absent = missing_module(
        "hypothesis", "pip install hypothesis (a dependency of ctxrules)", "ctxrules check"
    )
    source = spec_source(spec_name)
    if absent is not None or isinstance(source, Failure):
        sys.stderr.write((absent or source.failure()) + "\n")
        return EXIT_SPEC
    # The search draws from ctxrules's own strategies only: no plugin of another package is
    # needed (trio's, installed beside pytest, costs half a second of every start).
    os.environ.setdefault("HYPOTHESIS_NO_PLUGINS", "1")
    # Imported here: Hypothesis loads only for the command that searches with it.
    from ctxrules.checker.runner import RULE_INVARIANTS  # noqa: PLC0415
    from ctxrules.checker.spec_check import check_pipeline  # noqa: PLC0415
    from ctxrules.cli.report import format_counterexample  # noqa: PLC0415
    from ctxrules.testing.histories import LARGEST  # noqa: PLC0415

    if args.allow_imports:
        import_from_current_folder()
    loaded = load_spec(source.unwrap(), allow_imports=args.allow_imports)
    if isinstance(loaded, Failure):
        sys.stderr.write(f"{loaded.failure()}\n")
        return EXIT_SPEC
    if args.examples < 1:
        sys.stderr.write(f"ctxrules check: --examples={args.examples}: give at least 1\n")
        return EXIT_SPEC
    started = time.perf_counter()
    report = check_pipeline(
        str(source.unwrap()),
        loaded.unwrap(),
        examples=args.examples,
        seed=args.seed,
        allow_imports=args.allow_imports,
        progress=lambda done, total, label: _progress(out, done, total, label),
        children=args.hash_seeds,
    )
    if report.counterexample is not None:
        out.write(format_counterexample(report.counterexample) + "\n")
        return EXIT_VIOLATION
    seconds = time.perf_counter() - started
    names = ", ".join(f"{n} {INVARIANT_NAMES[n]}" for n in RULE_INVARIANTS)
    out.write(
        f"ok: {spec_name}\n"
        f"  rules checked: {report.rules} and the whole pipeline\n"
        f"  examples: {report.examples} commits per rule (up to {LARGEST} items),"
        f" {report.sessions} sessions, {report.hash_seed_cases} runs under"
        f" {report.hash_seed_children} other hash seeds\n"
        f"  invariants: {names}\n"
        f"  seed: {args.seed if args.seed is not None else 'derandomized'}\n"
        f"  time: {seconds:.1f} s\n"
    )
    return EXIT_OK


def register(commands: Any) -> None:  # noqa: ANN401 - argparse's subparsers type is private
    """Add the ``check`` subcommand."""
    parser = commands.add_parser("check", help="check a spec's rules against the invariants")
    parser.add_argument(
        "spec",
        nargs="?",
        default=None,
        help="a TOML pipeline spec, or a built-in one by name (default, small-window, cache-sensitive)",
    )
    parser.add_argument(
        "--spec", dest="spec_option", default=None, help="the same, as an option: --spec default"
    )
    parser.add_argument(
        "--allow-imports",
        action="store_true",
        help="allow 'package.module:factory' rules (modules are found from the current folder)",
    )
    parser.add_argument(
        "--examples", type=int, default=200, help="generated commits per rule (default 200)"
    )
    parser.add_argument("--seed", type=int, default=None, help="seed for a reproducible search")
    parser.add_argument(
        "--hash-seeds",
        type=int,
        default=None,
        metavar="N",
        help="child processes that rerun the rules under other PYTHONHASHSEEDs"
        " (default 6 when the spec names Python code, 2 for ctxrules's own rules)",
    )
    parser.set_defaults(run=run)
