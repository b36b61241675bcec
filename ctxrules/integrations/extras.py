"""The check each integration makes first: its framework is installed, or a clear ImportError."""

from __future__ import annotations

import importlib.util


def require(modules: tuple[str, ...], extra: str) -> None:
    """Raise an `ImportError` naming ``extra`` when any of ``modules`` is not installed.

    >>> require(("json",), "none")
    >>> require(("no_such_framework",), "demo")
    Traceback (most recent call last):
    ...
    ImportError: this integration needs no_such_framework: pip install 'ctxrules[demo]'
    """
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        msg = f"this integration needs {', '.join(missing)}: pip install 'ctxrules[{extra}]'"
        raise ImportError(msg, name=missing[0])
