"""The LangChain importer reads ``messages_to_dict`` records with no LangChain installed."""

from __future__ import annotations

import json

from ctxrules.importers import import_text

#: ``messages_to_dict`` output of a system, human, AI-with-tool-call, tool and AI message.
RECORDS = [
    {"type": "system", "data": {"content": "Be brief.", "type": "system", "id": "s1"}},
    {"type": "human", "data": {"content": "hi", "type": "human", "id": "h1", "name": None}},
    {
        "type": "ai",
        "data": {
            "content": [
                {"type": "text", "text": "let me look"},
                {"type": "reasoning", "reasoning": "grep"},
            ],
            "type": "ai",
            "id": "a1",
            "tool_calls": [{"name": "grep", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}],
            "invalid_tool_calls": [],
            "usage_metadata": None,
        },
    },
    {
        "type": "tool",
        "data": {
            "content": "x.py",
            "type": "tool",
            "id": None,
            "tool_call_id": "c1",
            "status": "success",
        },
    },
    {"type": "ai", "data": {"content": "x.py has it", "type": "ai", "id": "a2", "tool_calls": []}},
]


def test_messages_to_dict_records_keep_every_text_and_id() -> None:
    """Texts, node ids and the tool call id survive; reasoning goes to metadata, not the text."""
    result = import_text(json.dumps(RECORDS)).unwrap()
    graph = result.session.graph
    rows = [
        (n.id, n.role.value, n.output, n.metadata.get("tool_call_id"))
        for n in (graph.nodes[i] for i in graph.order)
    ]
    assert result.format == "langchain"
    assert rows == [
        ("s1", "system", "Be brief.", None),
        ("h1", "user", "hi", None),
        ("a1", "assistant", "let me look", None),
        ("tool:c1", "tool", "x.py", "c1"),
        ("a2", "assistant", "x.py has it", None),
    ]
    assert graph.nodes["a1"].metadata["reasoning"] == "grep"
