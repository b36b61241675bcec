"""Entry point of the `ctxrules` command: parse arguments and dispatch to a subcommand."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Sequence

from ctxrules import __version__
from ctxrules.cli import check, demo, inspect, migrate, replay, show, verify
from ctxrules.cli.guard import OneLineParser, check_arguments, run_guarded


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = OneLineParser(
        prog="ctxrules",
        description="Decide what an LLM reads on every call of a long agent session.",
    )
    parser.add_argument("--version", action="version", version=f"ctxrules {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check.register(commands)
    demo.register(commands)
    inspect.register(commands)
    migrate.register(commands)
    replay.register(commands)
    show.register(commands)
    verify.register(commands)
    check_arguments(parser)
    return parser


@functools.cache
def _parser() -> argparse.ArgumentParser:
    # Built once per process: the fuzz tests call main() thousands of times in process.
    return build_parser()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit status: 2 and one line for bad input."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help, --version, or a bad argument (already reported)
        return done.code if isinstance(done.code, int) else 0
    if args.command is None:
        parser.print_help()
        return 0
    return run_guarded(args.run, args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
