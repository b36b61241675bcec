"""`Context` keeps its session in either store, named by URL: saved, searched, offloaded, reopened."""

from __future__ import annotations

import pytest

import ctxrules
from ctxrules.recall import handle_for
from ctxrules.store import open_store
from ctxrules.testing.fake_sdk import FakeOpenAI

pytest.importorskip("openai")

SPEC = """
[recall]
tools = true
offload_chars = 1000

[[rules]]
use = "cap_tool_result"
[rules.params]
max_chars = 400
tail_share = 0.25
"""
LOG = "".join(f"line {i}: all is well\n" for i in range(200))
TOOLS = [{"name": "read_log", "description": "Read the log", "input_schema": {"type": "object"}}]


def test_a_context_on_a_store_url_saves_searches_offloads_and_reopens(store_url: str) -> None:
    """The same loop on SQLite and PostgreSQL: search finds the hidden line, the log is kept whole, a new Context continues."""
    ctx = ctxrules.Context(SPEC, model="gpt-4o", tools=TOOLS, store=store_url, session="s")
    ctx.add({"role": "user", "content": "what does the log say?"})
    client = FakeOpenAI([[("read_log", {})], [("search_history", {"query": "line 150"})], "done"])
    found = []
    while True:
        reply = ctx.record(client.chat.completions.create(**ctx.openai()))
        if not reply.tool_calls:
            break
        for call in reply.tool_calls:
            answer = ctx.answer_recall(call)
            if answer is None:
                ctx.add_tool_result(call.id, LOG)
            else:
                found.append(answer)
    ctx.add({"role": "user", "content": "and now?"})
    expected = ctx.openai()
    ctx.close()
    tool = next(n for n in ctx.session.graph.nodes.values() if n.name == "read_log")
    assert found[0].split()[0] == handle_for(tool.id)
    assert "150" in found[0]
    with open_store(store_url).unwrap() as store:
        assert store.get_blob("s", handle_for(tool.id)).unwrap() == LOG
    again = ctxrules.Context(SPEC, model="gpt-4o", tools=TOOLS, store=store_url, session="s")
    assert again.openai() == expected
    again.close()
