"""Every integration refuses, when it is made, a window no model has (as `ctxrules.Context` does).

Before, only a window under one token was refused: a float one (``window=8000.0``) was
taken, then every model call failed and went out unmanaged, with a warning at best.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

import pytest


def _maker(module: str, name: str, **given: Any) -> Callable[[object], Any]:
    """A constructor from ``module`` taking the window; skipped where its extra is missing."""

    def make(window: object) -> Any:
        try:
            found = importlib.import_module(module)
        except ImportError:
            pytest.skip(f"{module} needs an extra that is not installed")
        return getattr(found, name)(window=window, **given)

    return make


MAKERS = {
    "CtxrulesMiddleware": _maker("ctxrules.integrations.langchain", "CtxrulesMiddleware"),
    "CtxSession": _maker("ctxrules.integrations.openai_agents", "CtxSession", session_id="s"),
    "ctxrules_input_filter": _maker("ctxrules.integrations.openai_agents", "ctxrules_input_filter"),
    "CtxInputFilter": _maker("ctxrules.integrations.openai_agents", "CtxInputFilter"),
}

#: Windows no model has: a float, a bool, a string, under 1,024 tokens, over 10,000,000.
BAD_WINDOWS = [0, -5, 8000.0, 2.5, True, "32000", 10**9]


@pytest.mark.parametrize("made", sorted(MAKERS))
@pytest.mark.parametrize("window", BAD_WINDOWS)
def test_a_window_no_model_has_is_refused_when_made(made: str, window: object) -> None:
    """The constructor raises a ValueError naming the value and what a window must be."""
    named = re.escape(f"window={window!r}: expected the model's context window in tokens")
    with pytest.raises(ValueError, match=f"^{named}"):
        MAKERS[made](window)


@pytest.mark.parametrize("made", sorted(MAKERS))
def test_a_real_window_is_kept(made: str) -> None:
    """A whole number of tokens within the bounds is taken as it is."""
    assert MAKERS[made](32_000).window == 32_000
