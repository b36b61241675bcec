"""Public Hypothesis strategies for ctxrules values, for this repository's and users' CI.

Hypothesis is a dependency of ctxrules; `fake_sdk` stands in for the OpenAI and Anthropic clients.
"""

from ctxrules.testing.commits import commits, context_items, texts
from ctxrules.testing.compaction import (
    FakeSummarizer,
    ReplayReport,
    agent_sessions,
    cut_views,
    replay_compaction,
    summarizers,
)
from ctxrules.testing.dag import json_values, session_steps, sessions
from ctxrules.testing.machine import session_machine
from ctxrules.testing.messages import conversations
from ctxrules.testing.rules import builtin_params, facts_for, param_values, pipelines

__all__ = [
    "FakeSummarizer",
    "ReplayReport",
    "agent_sessions",
    "builtin_params",
    "commits",
    "context_items",
    "conversations",
    "cut_views",
    "facts_for",
    "json_values",
    "param_values",
    "pipelines",
    "replay_compaction",
    "session_machine",
    "session_steps",
    "sessions",
    "summarizers",
    "texts",
]
