"""Anthropic server tools (web search): their blocks are not kept, and `record` says so.

ctxrules keeps a reply's text, tool calls and thinking. A ``server_tool_use`` and its
``web_search_tool_result`` were dropped without a word: later requests lose the search
results, and a ``pause_turn`` reply cannot be continued (docs/getting-started.md).
"""

from __future__ import annotations

import pytest

import ctxrules

pytest.importorskip("anthropic")

from anthropic.types import Message


def test_record_warns_of_the_blocks_it_leaves_out_and_keeps_the_text() -> None:
    """The warning names the block types; the reply's text, citations aside, is kept."""
    searched = Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5},
            "content": [
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_1",
                    "name": "web_search",
                    "input": {"query": "ctxrules"},
                },
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srvtoolu_1",
                    "content": [
                        {
                            "type": "web_search_result",
                            "url": "https://example.com",
                            "title": "Example",
                            "encrypted_content": "EnC",
                        }
                    ],
                },
                {
                    "type": "text",
                    "text": "It is a context library.",
                    "citations": [
                        {
                            "type": "web_search_result_location",
                            "url": "https://example.com",
                            "title": "Example",
                            "encrypted_index": "EnI",
                            "cited_text": "a context library",
                        }
                    ],
                },
            ],
        }
    )
    ctx = ctxrules.Context(model="claude-sonnet-4-5")
    ctx.add({"role": "user", "content": "What is ctxrules?"})
    match = "server_tool_use, web_search_tool_result block.* left out"
    with pytest.warns(ctxrules.ContextWarning, match=match):
        reply = ctx.record(searched)
    assert reply.text == "It is a context library."
    assert ctx.anthropic()["messages"][-1]["content"][0]["text"] == reply.text  # type: ignore[index]
