"""The specs that ship inside the package, found by name (``default``, ``small-window``)."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

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
