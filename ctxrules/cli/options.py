"""What several commands share: naming a spec, importing the user's modules, optional extras."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from returns.result import Result

from ctxrules.spec.builtin import find_spec
from ctxrules.spec.source import SpecSource

#: The session bundled with the package (a real Claude Code session; see its NOTICE.md).
BUNDLED_SESSION = Path(__file__).resolve().parents[1] / "data" / "sessions"


def bundled_session() -> Path:
    """The path of the bundled example session."""
    return next(iter(sorted(BUNDLED_SESSION.glob("*.jsonl"))))


def spec_source(value: str) -> Result[SpecSource, str]:
    """The spec a ``--spec`` value names (a built-in name or a path), or why it names none.

    >>> print(spec_source("defualt").failure())
    --spec defualt: no such file, and no built-in spec of that name (built-in: cache-sensitive, default, small-window); did you mean 'default'?
    """
    return find_spec(value).alt(lambda unknown: f"--spec {value}: {unknown}")


def import_from_current_folder() -> None:
    """Let ``module:function`` names find modules in the current folder, as pytest does."""
    here = str(Path.cwd())
    if here not in sys.path:
        sys.path.insert(0, here)


def missing_module(module: str, install: str, why: str) -> str | None:
    """What to print when ``module`` cannot be imported (``install`` says how to get it), or None.

    >>> print(missing_module("no_such_module", "pip install 'ctxrules[report]'", "--report"))
    --report needs no_such_module: pip install 'ctxrules[report]'
    """
    try:
        if importlib.util.find_spec(module) is not None:
            return None
    except (ImportError, ValueError):  # a broken or blocked install counts as missing
        pass
    return f"{why} needs {module}: {install}"
