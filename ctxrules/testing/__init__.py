"""Public Hypothesis strategies for ctxrules values, for this repository's and users' CI.

Requires the ``hypothesis`` package (in the ``dev`` extra).
"""

from ctxrules.testing.commits import commits, context_items, texts
from ctxrules.testing.dag import json_values, session_steps, sessions

__all__ = ["commits", "context_items", "json_values", "session_steps", "sessions", "texts"]
