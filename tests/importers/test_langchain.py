"""Hand-written LangChain / LangGraph message lists pin the exact DAG the importer builds."""

from __future__ import annotations

import json

from ctxrules.dag import Graph
from ctxrules.importers import ImportResult, import_text

MESSAGES: list[dict[str, object]] = [
    {"type": "human", "content": [{"type": "text", "text": "Trends?"}], "id": "h1"},
    {"type": "system", "content": "<uploaded_files/>", "id": "s1"},
    {
        "type": "ai",
        "content": "",
        "id": "a1",
        "additional_kwargs": {"reasoning_content": "search first"},
        "response_metadata": {"model_name": "deepseek-v3", "finish_reason": "tool_calls"},
        "tool_calls": [
            {"name": "web_search", "args": {"query": "2026"}, "id": "c1", "type": "tool_call"},
            {"name": "fetch", "args": {"url": "x"}, "id": "c2", "type": "tool_call"},
        ],
        "invalid_tool_calls": [],
        "usage_metadata": {"input_tokens": 40, "output_tokens": 5},
    },
    {"type": "tool", "content": "results", "tool_call_id": "c1", "status": "success", "id": "t1"},
    {"type": "tool", "content": "404", "tool_call_id": "c2", "status": "error", "id": "t2"},
    {"type": "ai", "content": "Here they are.", "id": "a2", "tool_calls": []},
    {"type": "remove", "id": "r1", "content": ""},
]

STATE = {"values": {"messages": MESSAGES, "title": "t"}, "metadata": {"thread_id": "th-1"}}


def _import(document: object) -> ImportResult:
    return import_text(json.dumps(document)).unwrap()


def _shape(graph: Graph) -> list[tuple[object, ...]]:
    return [
        (n.id, n.role.value, n.predecessor, n.caller, n.status.value, n.output)
        for n in (graph.nodes[i] for i in graph.order)
    ]


def test_thread_state_structure_is_pinned() -> None:
    """Message ids become node ids; tool results fill the calls by tool_call_id, errors marked."""
    result = _import(STATE)
    assert result.format == "langchain"
    assert _shape(result.session.graph) == [
        ("h1", "user", None, None, "done", "Trends?"),
        ("s1", "system", "h1", None, "done", "<uploaded_files/>"),
        ("a1", "assistant", "s1", None, "done", ""),
        ("tool:c1", "tool", None, "a1", "done", "results"),
        ("tool:c2", "tool", None, "a1", "error", "404"),
        ("a2", "assistant", "a1", None, "done", "Here they are."),
    ]
    assert (result.session.session_id, result.session.head) == ("th-1", "a2")
    assert dict(result.stats.skipped) == {"remove": 1}


def test_assistant_metadata_is_kept() -> None:
    """Model name, reasoning, usage and finish reason of an ai message are kept on its node."""
    node = _import(STATE).session.graph.nodes["a1"]
    assert node.name == "deepseek-v3"
    assert node.metadata_value() == {
        "reasoning_content": "search first",
        "usage": {"input_tokens": 40, "output_tokens": 5},
        "finish_reason": "tool_calls",
    }


def test_serialised_constructors_and_openai_shaped_tool_calls() -> None:
    """``lc`` constructor messages unwrap; tool calls only in additional_kwargs are read too."""
    call = {"id": "c9", "type": "function", "function": {"name": "ls", "arguments": '{"p": "."}'}}
    messages = [
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
         "kwargs": {"content": "list"}},
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
         "kwargs": {"content": "", "additional_kwargs": {"tool_calls": [call]}}},
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
         "kwargs": {"content": "a.py", "tool_call_id": "c9"}},
    ]  # fmt: skip
    result = _import(messages)
    assert result.format == "langchain"
    assert _shape(result.session.graph) == [
        ("m1", "user", None, None, "done", "list"),
        ("m2", "assistant", "m1", None, "done", ""),
        ("tool:c9", "tool", None, "m2", "done", "a.py"),
    ]
    assert result.session.graph.nodes["tool:c9"].input_value() == {"p": "."}


def test_repeated_message_ids_fall_back_to_positions() -> None:
    """A message id already used gives the node a positional id and keeps the original in metadata."""
    messages = [
        {"type": "human", "content": "a", "id": "x"},
        {"type": "ai", "content": "b", "id": "x"},
    ]
    graph = _import(messages).session.graph
    assert list(graph.order) == ["x", "m2"]
    assert graph.nodes["m2"].metadata_value() == {"message_id": "x"}
