"""Doctests of an integration run only where its framework is installed (its extra)."""

import importlib.util

_NEEDS = {"langchain": ("langchain", "langchain_core", "langgraph"), "openai_agents": ("agents",)}

collect_ignore = [
    folder
    for folder, modules in _NEEDS.items()
    if any(importlib.util.find_spec(name) is None for name in modules)
]
