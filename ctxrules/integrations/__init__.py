"""Thin adapters to the agent frameworks users run, each behind its own extra.

``ctxrules.integrations.langchain`` needs ``pip install 'ctxrules[langchain]'``;
``ctxrules.integrations.openai_agents`` needs ``pip install 'ctxrules[agents]'``. Importing
either without its extra raises an `ImportError` that names the extra.
"""
