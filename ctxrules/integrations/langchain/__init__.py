"""LangChain / LangGraph: messages in and out, and an agent middleware (extra ``langchain``)."""

from ctxrules.integrations.extras import require

require(("langchain", "langchain_core", "langgraph"), "langchain")

from ctxrules.integrations.langchain.messages import (  # noqa: E402 - after the extra's check
    entries_of,
    from_langchain,
    to_langchain,
)
from ctxrules.integrations.langchain.middleware import (  # noqa: E402 - see above
    CtxrulesMiddleware,
    usage_of,
)

__all__ = ["CtxrulesMiddleware", "entries_of", "from_langchain", "to_langchain", "usage_of"]
