"""Hand-written OpenAI chat logs pin the exact DAG the importer builds from them."""

from __future__ import annotations

import json

from ctxrules.dag import Graph
from ctxrules.importers import ImportResult, import_text


def _call(call_id: str, name: str, arguments: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


MESSAGES: list[dict[str, object]] = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": [{"type": "text", "text": "Fix it."}, {"type": "image_url"}]},
    {
        "role": "assistant",
        "content": "Looking.",
        "reasoning_content": "think first",
        "tool_calls": [_call("c1", "bash", '{"command": "ls"}'), _call("c2", "bash", "not json")],
        "extra": {
            "response": {"model": "deepseek-chat", "usage": {"prompt_tokens": 12}},
            "timestamp": 5.5,
        },
    },
    {"role": "tool", "tool_call_id": "c2", "content": "oops"},
    {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
    {"role": "assistant", "content": None, "tool_calls": [_call("c3", "bash", "{}")]},
    {"role": "exit", "content": "diff --git ..."},
]

TRAJECTORY = {
    "info": {"config": {"model": {"model_name": "deepseek/fallback"}}},
    "messages": MESSAGES,
    "trajectory_format": "mini-swe-agent-1.1",
    "instance_id": "demo__demo-1",
}


def _import(document: object) -> ImportResult:
    return import_text(json.dumps(document)).unwrap()


def _shape(graph: Graph) -> list[tuple[object, ...]]:
    return [
        (n.id, n.role.value, n.name, n.predecessor, n.caller, n.status.value, n.output)
        for n in (graph.nodes[i] for i in graph.order)
    ]


def test_trajectory_structure_is_pinned() -> None:
    """Roles, names, edges, statuses and outputs, with results matched by tool_call_id."""
    result = _import(TRAJECTORY)
    assert result.format == "openai-chat"
    assert _shape(result.session.graph) == [
        ("m1", "system", "", None, None, "done", "You are helpful."),
        ("m2", "user", "", "m1", None, "done", "Fix it.\n[image_url]"),
        ("m3", "assistant", "deepseek-chat", "m2", None, "done", "Looking."),
        ("tool:c1", "tool", "bash", None, "m3", "done", "a.py"),
        ("tool:c2", "tool", "bash", None, "m3", "done", "oops"),
        ("m6", "assistant", "deepseek/fallback", "m3", None, "done", ""),
        ("tool:c3", "tool", "bash", None, "m6", "error", None),
    ]


def test_trajectory_session_and_stats() -> None:
    """The instance id names the session; the exit message is skipped and the last call unanswered."""
    result = _import(TRAJECTORY)
    assert (result.session.session_id, result.session.head) == ("demo__demo-1", "m6")
    stats = result.stats
    assert (stats.records, stats.tool_calls, stats.unanswered_tool_calls) == (7, 3, 1)
    assert dict(stats.skipped) == {"exit": 1}
    assert dict(stats.nodes_by_role) == {"assistant": 2, "system": 1, "tool": 3, "user": 1}


def test_assistant_metadata_and_arguments() -> None:
    """reasoning_content and usage go to metadata; arguments are parsed, or kept raw and flagged."""
    nodes = _import(TRAJECTORY).session.graph.nodes
    assert nodes["m3"].metadata_value() == {
        "reasoning_content": "think first",
        "usage": {"prompt_tokens": 12},
    }
    assert nodes["m3"].created_at == 5.5
    assert nodes["tool:c1"].input_value() == {"command": "ls"}
    assert nodes["tool:c2"].input_value() == "not json"
    assert nodes["tool:c2"].metadata_value() == {"tool_call_id": "c2", "arguments_not_json": True}


def test_bare_message_list_imports_the_same_nodes() -> None:
    """A bare list of messages gives the same graph as the trajectory, bar the fallback model name."""
    bare = _import(MESSAGES).session
    assert [row[:2] for row in _shape(bare.graph)] == [
        ("m1", "system"),
        ("m2", "user"),
        ("m3", "assistant"),
        ("tool:c1", "tool"),
        ("tool:c2", "tool"),
        ("m6", "assistant"),
        ("tool:c3", "tool"),
    ]
    assert bare.graph.nodes["m6"].name == ""
    assert bare.session_id == "<text>"


def _reusing(turns: int, *, answered: bool = True) -> list[dict[str, object]]:
    """A log from a server that names every reply's call ``call_0``."""
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    for n in range(turns):
        messages.append(
            {"role": "assistant", "content": None, "tool_calls": [_call("call_0", "run", "{}")]}
        )
        if answered or n == turns - 1:
            messages.append({"role": "tool", "tool_call_id": "call_0", "content": f"out {n}"})
    return messages


def test_a_call_id_reused_after_its_result_is_imported_under_a_fresh_id() -> None:
    """Each call keeps its own result; the id the log used stays in the node's metadata."""
    graph = _import(_reusing(3)).session.graph
    tools = [graph.nodes[i] for i in graph.order if graph.nodes[i].role.value == "tool"]
    assert [t.metadata["tool_call_id"] for t in tools] == ["call_0", "call_0_2", "call_0_3"]
    assert [t.metadata.get("provider_tool_call_id") for t in tools] == [None, "call_0", "call_0"]
    assert [t.output for t in tools] == ["out 0", "out 1", "out 2"]


def test_a_call_id_reused_before_its_result_is_still_a_bad_record() -> None:
    """Which call a later result answers could not be told: the record is refused."""
    failure = import_text(json.dumps(_reusing(2, answered=False))).failure()
    assert "duplicate tool call id 'call_0' (the earlier call has no result yet)" in str(failure)
