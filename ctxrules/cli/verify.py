"""`ctxrules verify PATH`: check a recorded session (JSON Lines of its DAG) against the invariants."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from returns.result import Failure

from ctxrules.check.recorded import verify_graph
from ctxrules.dag import graph_from_jsonl
from ctxrules.rules import Facts, Pipeline
from ctxrules.spec import load_spec


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Report every violation with its ids; 0 clean, 1 violations, 2 unreadable input."""
    try:
        text = Path(args.path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        sys.stderr.write(f"{args.path}: cannot read: {error}\n")
        return 2
    graph = graph_from_jsonl(text)
    if isinstance(graph, Failure):
        sys.stderr.write(f"{args.path}: {graph.failure()}\n")
        return 2
    pipeline = Pipeline()
    if args.spec is not None:
        loaded = load_spec(args.spec)
        if isinstance(loaded, Failure):
            sys.stderr.write(f"{loaded.failure()}\n")
            return 2
        pipeline = loaded.unwrap()
    violations = verify_graph(graph.unwrap(), pipeline, Facts())
    out.writelines(f"{args.path}: {violation.message}\n" for violation in violations)
    nodes = len(graph.unwrap())
    out.write(
        f"{'ok' if not violations else 'FAILED'}: {nodes} nodes, {len(violations)} violations\n"
    )
    return 1 if violations else 0


def register(commands: Any) -> None:  # noqa: ANN401 - argparse's subparsers type is private
    """Add the ``verify`` subcommand."""
    parser = commands.add_parser("verify", help="check a recorded session against the invariants")
    parser.add_argument("path", help="the session's DAG as JSON Lines (ctxrules export)")
    parser.add_argument(
        "--spec", default=None, help="build the commits with this spec (default: no rules)"
    )
    parser.set_defaults(run=run)
