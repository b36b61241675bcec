"""Reading a spec: a path or the TOML text itself, parsed with `tomllib`, never raising."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, TypeAlias

from returns.result import Failure, Result, Success

from ctxrules.spec.errors import Location, SpecError

#: What `load_spec` accepts: a path to a ``.toml`` file, or the TOML text itself.
SpecSource: TypeAlias = str | os.PathLike[str]

#: The label errors print for a spec given as text.
STRING_LABEL = "<string>"

_AT = re.compile(
    r"^(?P<message>.*?)\s*\(at (?:line (?P<line>\d+), column (?P<column>\d+)|end of document)\)$"
)


def is_text(source: SpecSource) -> bool:
    """Whether ``source`` is TOML text rather than a path: a ``str`` holding a newline or ``=``.

    A `pathlib.Path` (any ``os.PathLike``) is always a path.

    >>> is_text("version = 1"), is_text("specs/default.toml"), is_text(Path("a=b.toml"))
    (True, False, False)
    """
    return isinstance(source, str) and ("\n" in source or "=" in source)


def label(source: SpecSource) -> str:
    """The file name errors print: the path as given, or ``<string>`` for text."""
    return STRING_LABEL if is_text(source) else os.fspath(source)


def read_document(source: SpecSource) -> Result[dict[str, Any], SpecError]:
    r"""The parsed TOML document, or the one error that stopped reading or parsing it.

    >>> print(read_document("version = 1\nname\n").failure())
    <string>: line 2, column 5: expected valid TOML, found a syntax error (Expected '=' after a key in a key/value pair)
    """
    where = Location(label(source))
    if is_text(source):
        text = str(source)
    else:
        try:
            data = Path(source).read_bytes()
        except (OSError, ValueError, TypeError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            return Failure(
                where.error("a readable file", f"{type(error).__name__}: {reason}", "unreadable")
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            return Failure(
                where.error(
                    "UTF-8 text",
                    f"byte {data[error.start]:#04x} at offset {error.start}",
                    "unreadable",
                )
            )
    try:
        return Success(tomllib.loads(text))
    except tomllib.TOMLDecodeError as error:
        return Failure(_syntax_error(where, str(error)))


def _syntax_error(where: Location, text: str) -> SpecError:
    match = _AT.match(text)
    message = match.group("message") if match else text
    if match and match.group("line"):
        where = Location(where.file, f"line {match.group('line')}, column {match.group('column')}")
    elif match:
        where = Location(where.file, "end of document")
    return where.error("valid TOML", f"a syntax error ({message})", "syntax")
