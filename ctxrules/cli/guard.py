"""The command line's one rule for bad input: exit 2 with one line that says what and where.

Three parts, applied to every subcommand by `main`: the parser reports a bad argument in
one line; arguments are checked by what their names promise (a file read must be a
regular file, a file written must not be a folder or a device, a count must be positive,
a limit not negative, a port within 0-65535);
and whatever still escapes a command becomes one line instead of a traceback.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TextIO

from returns.result import Failure

from ctxrules.cli.options import spec_source
from ctxrules.rules import RuleRaised
from ctxrules.spec.builtin import builtin_specs
from ctxrules.tokens.models import (
    MAX_CONTEXT_WINDOW,
    MIN_CONTEXT_WINDOW,
    BadWindow,
    real_context_window,
)

#: Exit status for bad input (the shell's convention for a usage error).
BAD_INPUT = 2
#: Exit status for a fault in ctxrules itself (BSD's EX_SOFTWARE); the line asks for a report.
INTERNAL = 70
#: Set to show the traceback of an internal fault.
DEBUG_VARIABLE = "CTXRULES_DEBUG"

#: Arguments read as files (positional ``store`` is read; ``--store`` is written). A
#: migration's ``source`` is read: a missing one must not be created empty and copied.
READ = frozenset({"path", "source"})
#: Arguments naming a spec: a built-in spec's name, or a file read as such.
SPECS = frozenset({"spec", "spec_option"})
WRITTEN = frozenset({"report", "target"})
POSITIVE = frozenset({"examples", "hash_seeds"})
#: Counts where 0 means "no limit" (``show --limit 0`` shows all).
LIMITS = frozenset({"limit"})
#: Arguments naming a TCP port (0 lets the system pick one).
PORTS = frozenset({"port"})
#: Arguments naming a model's context window (`MIN_CONTEXT_WINDOW` to `MAX_CONTEXT_WINDOW` tokens).
WINDOWS = frozenset({"window"})
#: The largest TCP port.
MAX_PORT = 65_535


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line: ``ctxrules replay: --window: …``."""

    def error(self, message: str) -> NoReturn:
        """Print the error on one line and exit with `BAD_INPUT`."""
        sys.stderr.write(f"{self.prog}: {message} (see {self.prog} --help)\n")
        raise SystemExit(BAD_INPUT)


def _named(path: str) -> None:
    # An empty argument (an unset shell variable) is the current folder to `Path`.
    if not path.strip():
        raise argparse.ArgumentTypeError(f"expected a path, found {path!r}")


def readable_file(path: str) -> str:
    """``path`` if it is a regular file; FIFOs, devices and folders are refused, not read.

    >>> readable_file("/dev/zero")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: /dev/zero: not a regular file (a character device)
    """
    if "://" in path:  # a store URL (sqlite:///…, postgresql://…): its backend checks it
        return path
    _named(path)
    try:
        mode = Path(path).stat().st_mode
    except OSError as error:
        raise argparse.ArgumentTypeError(f"{path}: {error.strerror or error}") from None
    if not stat.S_ISREG(mode):
        raise argparse.ArgumentTypeError(f"{path}: not a regular file ({_kind(mode)})")
    return path


def spec_argument(value: str) -> str:
    """``value`` if it names a built-in spec (and no file of that name), else as `readable_file`.

    >>> spec_argument("default")
    'default'
    """
    if value in builtin_specs() and not Path(value).exists():
        return value
    if not Path(value).exists():
        named = spec_source(value)
        if isinstance(named, Failure):
            raise argparse.ArgumentTypeError(named.failure().removeprefix(f"--spec {value}: "))
    return readable_file(value)


def writable_file(path: str) -> str:
    """``path`` if it is absent or a regular file: a folder or a device is refused."""
    if "://" in path:  # a store URL: its backend checks it
        return path
    _named(path)
    try:
        mode = Path(path).stat().st_mode
    except FileNotFoundError:
        return path
    except OSError as error:
        raise argparse.ArgumentTypeError(f"{path}: {error.strerror or error}") from None
    if not stat.S_ISREG(mode):
        raise argparse.ArgumentTypeError(f"{path}: cannot write a file here ({_kind(mode)})")
    return path


def _whole(text: str, least: int, most: int | None, expected: str) -> int:
    """``text`` as an int from ``least`` to ``most`` (None: no upper bound), else says ``expected``."""
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least or (most is not None and value > most):
        raise argparse.ArgumentTypeError(f"expected {expected}, found {text!r}")
    return value


def positive_int(text: str) -> int:
    """``text`` as an int of at least 1.

    >>> positive_int("8000")
    8000
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a positive whole number, found '0'
    """
    return _whole(text, 1, None, "a positive whole number")


def limit_count(text: str) -> int:
    """``text`` as a limit: a whole number, 0 (no limit) or more.

    >>> limit_count("0")
    0
    >>> limit_count("-3")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a whole number, 0 (all) or more, found '-3'
    """
    return _whole(text, 0, None, "a whole number, 0 (all) or more")


def port_number(text: str) -> int:
    """``text`` as a TCP port: 0 (the system picks one) to 65535.

    >>> port_number("99999")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a port from 0 to 65535 (0 picks a free one), found '99999'
    """
    return _whole(text, 0, MAX_PORT, f"a port from 0 to {MAX_PORT} (0 picks a free one)")


def context_window(text: str) -> int:
    """``text`` as a model's context window: a whole number from 1,024 to 10,000,000 tokens.

    >>> context_window("32000")
    32000
    >>> context_window("100")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected the model's context window, at least 1,024 tokens (did you mean 100000?), found '100'
    >>> context_window("99999999999999999999")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected the model's context window, at most 10,000,000 tokens, found '99999999999999999999'
    """
    try:
        value = int(text)
    except ValueError:
        value = 0
    checked = real_context_window("", override=value)
    if value > MAX_CONTEXT_WINDOW:
        raise argparse.ArgumentTypeError(
            f"expected the model's context window, at most {MAX_CONTEXT_WINDOW:,} tokens, "
            f"found {text!r}"
        )
    if isinstance(checked, Failure):
        bad = checked.failure()
        guess = bad.guess if isinstance(bad, BadWindow) else None
        hint = f" (did you mean {guess}?)" if guess is not None else ""
        raise argparse.ArgumentTypeError(
            f"expected the model's context window, at least {MIN_CONTEXT_WINDOW:,} tokens"
            f"{hint}, found {text!r}"
        )
    return checked.unwrap()


#: The numeric arguments by name, each with its check.
_NUMBERS: tuple[tuple[frozenset[str], Callable[[str], int]], ...] = (
    (POSITIVE, positive_int),
    (LIMITS, limit_count),
    (PORTS, port_number),
    (WINDOWS, context_window),
)


def _kind(mode: int) -> str:
    kinds = {
        stat.S_ISDIR: "a folder",
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISSOCK: "a socket",
    }
    return next((name for test, name in kinds.items() if test(mode)), "not a file")


def check_arguments(parser: argparse.ArgumentParser) -> None:
    """Give every subcommand's arguments the check their name promises (see the module doc)."""
    for action in parser._actions:  # noqa: SLF001 - argparse has no public walk
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub in action.choices.values():
                check_arguments(sub)
            continue
        positional = not action.option_strings
        if action.dest in SPECS:
            action.type = spec_argument
        elif action.dest in READ or (action.dest == "store" and positional):
            action.type = readable_file
        elif action.dest in WRITTEN or action.dest == "store":
            action.type = writable_file
        else:
            action.type = next(
                (check for names, check in _NUMBERS if action.dest in names), action.type
            )


def run_guarded(
    command: Callable[[argparse.Namespace, TextIO], int], args: argparse.Namespace
) -> int:
    """Run a command; a fault that escapes it is one line on stderr, never a traceback."""
    name = getattr(args, "command", None) or "ctxrules"
    try:
        return command(args, sys.stdout)
    except KeyboardInterrupt:
        sys.stderr.write(f"ctxrules {name}: interrupted\n")
        return 130
    except RuleRaised as error:
        # The spec's own code, not ctxrules: the checker finds the input it fails on.
        sys.stderr.write(
            f"ctxrules {name}: {error} (the spec's code; `ctxrules check SPEC --allow-imports` "
            "finds an input it fails on)\n"
        )
        return BAD_INPUT
    except (OSError, UnicodeError, MemoryError, RecursionError) as error:
        # The input's fault: a file that cannot be read, decoded or held.
        where = getattr(error, "filename", None) or _first_input(args)
        sys.stderr.write(f"ctxrules {name}: {where}: {_describe(error)}\n")
        return BAD_INPUT
    except Exception as error:
        if os.environ.get(DEBUG_VARIABLE):
            raise
        sys.stderr.write(
            f"ctxrules {name}: internal error on {_first_input(args)}: {_describe(error)}"
            f" (a bug in ctxrules; rerun with {DEBUG_VARIABLE}=1 for the traceback)\n"
        )
        return INTERNAL


def _describe(error: BaseException) -> str:
    text = str(error).replace("\n", " ")
    return f"{type(error).__name__}: {text[:300]}" if text else type(error).__name__


def _first_input(args: argparse.Namespace) -> str:
    for name in ("path", "store", "spec"):
        value = getattr(args, name, None)
        if isinstance(value, str):
            return value
    return "<input>"
