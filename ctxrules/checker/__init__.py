"""The checker's shell: `ctxrules check` searching, trapping, child processes and bundled inputs.

`ctxrules.testing` holds the pure strategies; this package runs rules under traps, starts
child processes with other hash seeds and reads the session bundled with ctxrules. The
command and the pytest plugin import it; a user's own tests need only `ctxrules.testing`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxrules.checker.runner import Counterexample, check_rule
    from ctxrules.checker.sessions import check_sessions
    from ctxrules.checker.spec_check import SpecReport, check_pipeline

__all__ = ["Counterexample", "SpecReport", "check_pipeline", "check_rule", "check_sessions"]

#: Where each name lives. Loaded on first use: the hash-seed children run
#: `ctxrules.checker.child`, and importing this package must not load Hypothesis for them.
_HOMES = {
    "Counterexample": "runner",
    "check_rule": "runner",
    "check_sessions": "sessions",
    "SpecReport": "spec_check",
    "check_pipeline": "spec_check",
}


def __getattr__(name: str) -> object:
    """The re-exported name, its module imported on first use."""
    if name not in _HOMES:
        raise AttributeError(f"module 'ctxrules.checker' has no attribute {name!r}")
    return getattr(importlib.import_module(f"ctxrules.checker.{_HOMES[name]}"), name)
