"""A spec's ``[[pins]]`` hold through the middleware: a standing instruction is in every request."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "ctxrules.integrations.langchain",
    reason="the langchain extra is not installed",
    exc_type=ImportError,
)

from itertools import pairwise

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from test_langchain_cache_prefix import Worker, read_file

from ctxrules.integrations.langchain import CtxrulesMiddleware
from ctxrules.spec import load_spec
from ctxrules.spec.builtin import find_spec
from ctxrules.tokens import HeuristicCounter

RULE = "Never push to main; open a pull request instead."
PINS = """
[[pins]]
when = { role = "user", text = { matches = "(?i)\\\\bnever\\\\b" } }
"""


def test_a_pinned_instruction_is_sent_whole_in_every_request_across_compactions() -> None:
    """The default spec plus a ``[[pins]]`` table, at a window the history outgrows many times."""
    default = find_spec("default").unwrap().read_text()
    pipeline = load_spec(default + PINS).unwrap()
    model = Worker()
    seconds = iter(float(t) for t in range(0, 10**6, 5))
    middleware = CtxrulesMiddleware(
        window=8_000, pipeline=pipeline, tokenizer=HeuristicCounter(), clock=lambda: next(seconds)
    )
    agent = create_agent(
        model, tools=[read_file], middleware=[middleware], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "pins"}, "recursion_limit": 100}
    for task in range(40):
        # Given in the third task: the first message is kept as the history's head anyway.
        text = f"Task {task}: go on." + (f" {RULE}" if task == 2 else "")
        agent.invoke({"messages": [HumanMessage(text)]}, config)
    # The history was folded more than once: requests that shrank from the one before.
    sizes = [len(messages) for messages in model.log]
    assert sum(now < before for before, now in pairwise(sizes)) >= 2, sizes
    given = next(i for i, messages in enumerate(model.log) if RULE in str(messages[-1].content))
    for messages in model.log[given:]:
        assert any(RULE in str(m.content) for m in messages)
