"""The specs that ship inside the package, found by name (``default``, ``small-window``)."""

from __future__ import annotations

import difflib
import os
from importlib.resources import files
from pathlib import Path

import attrs
from returns.result import Failure, Result, Success

from ctxrules.spec.source import SpecSource, is_text

#: The folder of the built-in specs inside the installed package (the repository's
#: ``specs/`` holds identical copies for readers; a test keeps the two in step).
BUILTIN_DIR = Path(str(files("ctxrules") / "specs"))


def builtin_specs() -> tuple[str, ...]:
    """The names of the specs that ship with ctxrules, sorted.

    >>> builtin_specs()
    ('cache-sensitive', 'default', 'small-window')
    """
    return tuple(sorted(p.stem for p in BUILTIN_DIR.glob("*.toml")))


def resolve_spec(source: SpecSource) -> SpecSource:
    """A built-in spec's path for its bare name; anything else (a path, TOML text) as given.

    A file of that name in the current folder wins, so ``default`` can still be a user's file.

    >>> resolve_spec("default").name, resolve_spec("my.toml")
    ('default.toml', 'my.toml')
    """
    if is_text(source) or not isinstance(source, str) or os.sep in source or "/" in source:
        return source
    if source in builtin_specs() and not Path(source).exists():
        return BUILTIN_DIR / f"{source}.toml"
    return source


@attrs.frozen
class UnknownSpec:
    """A spec that names no file and no built-in spec: the name, and the closest built-in name."""

    name: str
    suggestion: str | None = None

    @property
    def message(self) -> str:
        """What is missing, the built-in names, and the closest one.

        >>> print(UnknownSpec("defualt", "default"))
        no such file, and no built-in spec of that name (built-in: cache-sensitive, default, small-window); did you mean 'default'?
        """
        hint = f"; did you mean {self.suggestion!r}?" if self.suggestion else ""
        return (
            "no such file, and no built-in spec of that name "
            f"(built-in: {', '.join(builtin_specs())}){hint}"
        )

    def __str__(self) -> str:
        return self.message


def find_spec(source: SpecSource) -> Result[SpecSource, UnknownSpec]:
    """`resolve_spec`, failing with the closest built-in name when no file has that name.

    >>> find_spec("default").unwrap().name
    'default.toml'
    >>> find_spec("defualt").failure().suggestion
    'default'
    """
    resolved = resolve_spec(source)
    try:
        if is_text(resolved) or Path(resolved).exists():
            return Success(resolved)
    except (OSError, ValueError):  # a name the file system refuses: load_spec says why
        return Success(resolved)
    name = os.fspath(source)
    close = difflib.get_close_matches(name, builtin_specs(), n=1)
    return Failure(UnknownSpec(name, close[0] if close else None))
