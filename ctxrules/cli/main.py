"""Entry point of the `ctxrules` command: parse arguments and dispatch to a subcommand."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ctxrules import __version__
from ctxrules.cli import check, demo, migrate, replay, show, verify


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="ctxrules",
        description="Decide what an LLM reads on every call of a long agent session.",
    )
    parser.add_argument("--version", action="version", version=f"ctxrules {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check.register(commands)
    demo.register(commands)
    migrate.register(commands)
    replay.register(commands)
    show.register(commands)
    verify.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    status: int = args.run(args, sys.stdout)
    return status


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
