"""Spec errors as values: where in which file, what was expected, what was found."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Literal

import attrs

#: The kinds of fault a spec can have; the CLI and tests can filter on them.
Fault = Literal[
    "unreadable",
    "syntax",
    "wrong_type",
    "unknown_name",
    "out_of_bounds",
    "missing",
    "conflict",
    "loosens_state",
    "reserved_state",
    "unsafe_template",
    "imports_refused",
    "import_failed",
    "internal",
]


@attrs.frozen
class SpecError:
    """One fault in a spec: the file, the key path to it, what was expected and found.

    ``path`` is dotted with 0-based indexes (``rules[2].when.turn_age``); it is empty for a
    fault of the whole document and a ``line L, column C`` location for a syntax error.

    >>> SpecError("default.toml", "rules[2].when.turn_age", "an integer operand for 'ge'", "'six' (str)", "wrong_type")
    SpecError(file='default.toml', path='rules[2].when.turn_age', expected="an integer operand for 'ge'", found="'six' (str)", fault='wrong_type', suggestion=None)
    >>> print(_)
    default.toml: rules[2].when.turn_age: expected an integer operand for 'ge', found 'six' (str)
    """

    file: str
    path: str
    expected: str
    found: str
    fault: Fault
    suggestion: str | None = None

    @property
    def message(self) -> str:
        """``file: path: expected …, found …`` and ``(did you mean 'x'?)`` when there is a guess.

        >>> SpecError("<string>", "rules[0].use", "a built-in rule name", "'clear_idel'", "unknown_name", "clear_idle").message
        "<string>: rules[0].use: expected a built-in rule name, found 'clear_idel' (did you mean 'clear_idle'?)"
        """
        where = f"{self.file}: {self.path}: " if self.path else f"{self.file}: "
        hint = f" (did you mean {self.suggestion!r}?)" if self.suggestion is not None else ""
        return f"{where}expected {self.expected}, found {self.found}{hint}"

    def __str__(self) -> str:
        return self.message


@attrs.frozen
class SpecErrors:
    """Every fault found in one spec, in the order found; prints one per line."""

    errors: tuple[SpecError, ...]

    @property
    def message(self) -> str:
        """The messages of every error, one per line."""
        return "\n".join(error.message for error in self.errors)

    def __str__(self) -> str:
        return self.message


@attrs.frozen
class Location:
    """A point in a spec being checked: the file label and the key path so far.

    >>> Location("a.toml").key("rules").index(2).key("when").path
    'rules[2].when'
    """

    file: str
    path: str = ""

    def key(self, name: str) -> Location:
        """The location of key ``name`` inside this table."""
        return Location(self.file, f"{self.path}.{name}" if self.path else name)

    def index(self, position: int) -> Location:
        """The location of element ``position`` inside this array."""
        return Location(self.file, f"{self.path}[{position}]")

    def error(
        self, expected: str, found: str, fault: Fault, suggestion: str | None = None
    ) -> SpecError:
        """A `SpecError` at this location."""
        return SpecError(self.file, self.path, expected, found, fault, suggestion)


def suggest(name: str, choices: Iterable[str]) -> str | None:
    """The closest valid name to ``name``, or None when nothing is close.

    >>> suggest("tokns", ["tokens", "turn_age"]), suggest("zzz", ["tokens"])
    ('tokens', None)
    """
    close = difflib.get_close_matches(name, list(choices), n=1)
    return close[0] if close else None


_TYPE_NAMES: dict[type, str] = {dict: "table", list: "array"}


def type_name(value: object) -> str:
    """The TOML-ish name of a value's type (``str``, ``int``, ``table``, ``array``, …)."""
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def describe(value: object, limit: int = 60) -> str:
    """A short ``repr`` of a found value followed by its type, as error messages print it.

    >>> describe("six"), describe([1, 2]), describe(float("nan"))
    ("'six' (str)", '[1, 2] (array)', 'nan (float)')
    """
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"{text} ({type_name(value)})"


def quoted(names: Iterable[str]) -> str:
    """Names quoted and joined for an ``expected one of …`` phrase.

    >>> quoted(["eq", "ne"])
    "'eq', 'ne'"
    """
    return ", ".join(repr(name) for name in names)
