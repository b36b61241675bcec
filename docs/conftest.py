"""Pages about an integration are doctested only where its framework (its extra) is installed."""

import importlib.util

_NEEDS = {
    "integrations-langchain.md": ("langchain", "langchain_core", "langgraph"),
    "integrations-openai-agents.md": ("agents",),
    "inspect.md": ("opentelemetry.sdk",),
}

collect_ignore = [
    page
    for page, modules in _NEEDS.items()
    if any(importlib.util.find_spec(name) is None for name in modules)
]
