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
    >>> print(read_document("").failure())
    : expected a spec: a file, a built-in name or TOML text, found ''
    """
    where = Location(label(source))
    if is_text(source):
        text = str(source)
    elif isinstance(source, str) and not source.strip():
        # An empty name (an unset variable) would be read as the current folder.
        return Failure(
            where.error("a spec: a file, a built-in name or TOML text", repr(source), "unreadable")
        )
    else:
        try:
            data = Path(source).read_bytes()
        except (OSError, ValueError, TypeError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            return Failure(
                where.error("a readable file", f"{type(error).__name__}: {reason}", "unreadable")
            )
        try:
            # utf-8-sig: an editor's byte order mark is not part of the TOML (importers agree).
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            return Failure(
                where.error(
                    "UTF-8 text",
                    f"byte {data[error.start]:#04x} at offset {error.start}",
                    "unreadable",
                )
            )
    return _parse(where, text)


def _parse(where: Location, text: str) -> Result[dict[str, Any], SpecError]:
    """Parse TOML text; a byte order mark is skipped, huge numbers and deep nesting refused."""
    text = text.removeprefix("\ufeff")
    deep = f"at most {MAX_DEPTH} levels of nesting"
    dotted = _deep_key(text)
    if dotted is not None:
        # tomllib keeps every prefix of a dotted key: 100,000 parts took 3.8 GB.
        return Failure(Location(where.file, dotted).error(deep, "a longer dotted key", "syntax"))
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return Failure(_syntax_error(where, str(error)))
    except ValueError:  # an integer past Python's digit limit
        return Failure(
            _at_first(where, text, _LONG_NUMBER, "a number of at most 4,300 digits", "a longer one")
        )
    except RecursionError:
        return Failure(_at_first(where, text, _DEEP, deep, "deeper nesting"))
    if _depth(document) > MAX_DEPTH:
        return Failure(_at_first(where, text, _DEEP, deep, "deeper nesting"))
    return Success(document)


#: Deeper tables and arrays are refused: every walker after the parser recurses per level.
MAX_DEPTH = 100
_LONG_NUMBER = re.compile(r"\d{4301,}")
_DEEP = re.compile(r"[\[{]{20,}")


def _deep_key(text: str) -> str | None:
    """The ``line N`` of the first key (or table header) of more than `MAX_DEPTH` dotted parts."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.count(".") <= MAX_DEPTH:
            continue
        stripped = line.lstrip()
        if stripped.startswith("#"):
            continue
        key = stripped if stripped.startswith("[") else stripped.split("=", 1)[0]
        if key.count(".") > MAX_DEPTH:
            return f"line {number}"
    return None


def _at_first(
    where: Location, text: str, pattern: re.Pattern[str], expected: str, found: str
) -> SpecError:
    """An error at the line where ``pattern`` first matches (the document when it does not)."""
    match = pattern.search(text)
    if match is not None:
        line = text.count("\n", 0, match.start()) + 1
        column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
        where = Location(where.file, f"line {line}, column {column}")
    return where.error(expected, found[:120], "syntax")


def _depth(value: object) -> int:
    """How deeply tables and arrays nest in a parsed document, without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
        if isinstance(node, dict):
            stack.extend((inner, depth + 1) for inner in node.values())
        elif isinstance(node, list):
            stack.extend((inner, depth + 1) for inner in node)
    return deepest


def _syntax_error(where: Location, text: str) -> SpecError:
    match = _AT.match(text)
    message = match.group("message") if match else text
    if match and match.group("line"):
        where = Location(where.file, f"line {match.group('line')}, column {match.group('column')}")
    elif match:
        where = Location(where.file, "end of document")
    return where.error("valid TOML", f"a syntax error ({message})", "syntax")
