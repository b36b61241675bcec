"""Recall calls a hostile model makes, answered through `Context` on each backend (issue 33 item 10).

A 1 MB handle gave a 1,000,045-character ``recall`` answer and a 1 MB query the same for
``search_history``: each answer repeated the model's argument whole. An answer now repeats
at most a short head of it, so every answer is bounded whatever the call.
"""

from __future__ import annotations

from ctxrules.engine.context import Context
from ctxrules.recall.tools import RECALL, SEARCH_HISTORY
from ctxrules.spec.recall import RecallOptions
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

HUGE = "h:" + "x" * 1_000_000
CALLS = [
    (RECALL, {"handle": HUGE}),
    (RECALL, {"handle": HUGE, "page": 2}),
    (SEARCH_HISTORY, {"query": "y" * 1_000_000}),
    (SEARCH_HISTORY, {"query": "word " * 200_000}),
    (SEARCH_HISTORY, {"query": "(" * 5_000 + "a"}),
    ("x" * 1_000_000, {"query": "a"}),
]


def test_every_answer_to_a_hostile_call_is_bounded(store_url: str) -> None:
    """Each answer holds at most a few hundred characters, however long the arguments."""
    ctx = Context(
        model="gpt-4o",
        window=16_000,
        store=store_url,
        tokenizer=HeuristicCounter(),
        recall=RecallOptions(tools=True),
    )
    ctx.add({"role": "user", "content": "Find the word needle in the history."})
    ctx.openai()
    calls = [(f"c{i}", name, args) for i, (name, args) in enumerate(CALLS)]
    reply = ctx.record(openai_response(1, "Looking.", calls, (100, 0)))
    for call in reply.tool_calls:
        answer = ctx.answer_recall(call)
        if answer is None:  # another tool's call: the host answers it
            assert call.name not in (RECALL, SEARCH_HISTORY)
            continue
        assert len(answer) <= 400, (call.name, answer[:100])
    ctx.close()
