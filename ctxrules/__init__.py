"""ctxrules: decide what an LLM reads on every call of a long agent session.

The everyday names are here, imported on first use so that ``import ctxrules`` stays light:

>>> import ctxrules
>>> ctxrules.Context.__name__, ctxrules.builtin_specs()
('Context', ('cache-sensitive', 'default', 'small-window'))
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

try:
    __version__ = version("ctxrules")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

if TYPE_CHECKING:
    from ctxrules.dag import Call, Session
    from ctxrules.engine import DefaultContextEngine, TurnPrep
    from ctxrules.engine.context import (
        ConfigError,
        Context,
        ContextBusy,
        ContextClosed,
        ContextError,
        ContextWarning,
        Durability,
        InputError,
        Reply,
        SessionMoved,
        StoreFailed,
    )
    from ctxrules.importers import import_session
    from ctxrules.render import render_commit, to_anthropic, to_openai
    from ctxrules.rules import Facts, Pipeline
    from ctxrules.spec import load_spec
    from ctxrules.spec.builtin import builtin_specs
    from ctxrules.store import SqliteStore
    from ctxrules.tokens.usage import ProviderUsage

#: Where each everyday name lives; loaded by `__getattr__` on first use.
_HOMES = {
    "Call": "ctxrules.dag",
    "ConfigError": "ctxrules.engine.context",
    "Context": "ctxrules.engine.context",
    "ContextBusy": "ctxrules.engine.context",
    "ContextClosed": "ctxrules.engine.context",
    "ContextError": "ctxrules.engine.context",
    "ContextWarning": "ctxrules.engine.context",
    "DefaultContextEngine": "ctxrules.engine",
    "Durability": "ctxrules.engine.context",
    "Facts": "ctxrules.rules",
    "InputError": "ctxrules.engine.context",
    "Pipeline": "ctxrules.rules",
    "ProviderUsage": "ctxrules.tokens.usage",
    "Reply": "ctxrules.engine.context",
    "Session": "ctxrules.dag",
    "SessionMoved": "ctxrules.engine.context",
    "SqliteStore": "ctxrules.store",
    "StoreFailed": "ctxrules.engine.context",
    "TurnPrep": "ctxrules.engine",
    "builtin_specs": "ctxrules.spec.builtin",
    "import_session": "ctxrules.importers",
    "load_spec": "ctxrules.spec",
    "render_commit": "ctxrules.render",
    "to_anthropic": "ctxrules.render",
    "to_openai": "ctxrules.render",
}

__all__ = [
    "Call",
    "ConfigError",
    "Context",
    "ContextBusy",
    "ContextClosed",
    "ContextError",
    "ContextWarning",
    "DefaultContextEngine",
    "Durability",
    "Facts",
    "InputError",
    "Pipeline",
    "ProviderUsage",
    "Reply",
    "Session",
    "SessionMoved",
    "SqliteStore",
    "StoreFailed",
    "TurnPrep",
    "__version__",
    "builtin_specs",
    "import_session",
    "load_spec",
    "render_commit",
    "to_anthropic",
    "to_openai",
]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ctxrules' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
