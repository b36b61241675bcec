"""The OpenAI Agents SDK: a session backed by ctxrules (extra ``agents``)."""

from ctxrules.integrations.extras import require

require(("agents",), "agents")

from ctxrules.integrations.openai_agents.input_filter import (  # noqa: E402 - after the extra's check
    CtxInputFilter,
    ctxrules_input_filter,
    tool_schemas,
)
from ctxrules.integrations.openai_agents.items import (  # noqa: E402 - see above
    entries_of,
    stored_items,
    to_items,
)
from ctxrules.integrations.openai_agents.session import (  # noqa: E402 - see above
    CtxSession,
    CtxSessionError,
)

__all__ = [
    "CtxInputFilter",
    "CtxSession",
    "CtxSessionError",
    "ctxrules_input_filter",
    "entries_of",
    "stored_items",
    "to_items",
    "tool_schemas",
]
