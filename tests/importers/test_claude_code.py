"""A hand-written Claude Code transcript pins the exact DAG the importer builds from it."""

from __future__ import annotations

import json

from ctxrules.dag import Graph
from ctxrules.importers import ImportResult, import_text


def _record(kind: str, uuid: str | None, parent: str | None, **fields: object) -> dict[str, object]:
    record: dict[str, object] = {"type": kind, "parentUuid": parent, "sessionId": "s-1", **fields}
    if uuid is not None:
        record["uuid"] = uuid
    return record


def _assistant(uuid: str, parent: str, message_id: str, *blocks: object) -> dict[str, object]:
    message = {"id": message_id, "model": "claude-x", "role": "assistant", "content": list(blocks)}
    return _record("assistant", uuid, parent, message=message)


def _user(uuid: str, parent: str | None, content: object, **fields: object) -> dict[str, object]:
    return _record("user", uuid, parent, message={"role": "user", "content": content}, **fields)


def _tool_use(call_id: str, name: str, **arguments: object) -> dict[str, object]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def _result(call_id: str, content: object, **fields: object) -> dict[str, object]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, **fields}


TRANSCRIPT = [
    {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
    _user("u1", None, "fix the bug", timestamp="2026-01-01T00:00:00Z"),
    _record("progress", "p1", "u1", data={"type": "hook_progress"}),
    _assistant("a1", "p1", "m1", {"type": "thinking", "thinking": "hmm", "signature": "s"}),
    _assistant("a2", "a1", "m1", {"type": "text", "text": "Looking."}),
    _assistant("a3", "a2", "m1", _tool_use("t1", "Read", path="a.py")),
    _assistant("a4", "a3", "m1", _tool_use("t2", "Bash", cmd="ls")),
    _user("r1", "a3", [_result("t1", "print()")]),
    _user("r2", "a4", [_result("t2", [{"type": "text", "text": "a.py"}], is_error=True)]),
    _record("system", "s1", "r2", subtype="stop_hook_summary"),
    _assistant("b1", "s1", "m2", _tool_use("t3", "Edit")),
    _user("r3", "b1", [_result("t3", "done")]),
    _assistant("c1", "r3", "m3", {"type": "text", "text": "Fixed."}),
    _record(
        "system",
        "cb",
        None,
        subtype="compact_boundary",
        content="Conversation compacted",
        logicalParentUuid="c1",
        compactMetadata={"trigger": "auto", "preTokens": 1234},
    ),
    _user(
        "cs", "cb", "Summary: fixed a bug.", isCompactSummary=True, isVisibleInTranscriptOnly=True
    ),
    _user("u2", "cs", "now add a test"),
    _user("u3", "cs", "actually, add docs"),
    _assistant("d1", "u3", "m4", _tool_use("t4", "Write")),
]


def _import(records: list[dict[str, object]]) -> ImportResult:
    return import_text("\n".join(json.dumps(r) for r in records) + "\n").unwrap()


def _shape(graph: Graph) -> list[tuple[object, ...]]:
    return [
        (n.id, n.role.value, n.predecessor, n.caller, n.status.value, n.output)
        for n in (graph.nodes[i] for i in graph.order)
    ]


def test_structure_is_pinned() -> None:
    """Roles, edges, statuses and outputs of every node, in append order."""
    result = _import(TRANSCRIPT)
    assert result.format == "claude-code"
    assert _shape(result.session.graph) == [
        ("u1", "user", None, None, "done", "fix the bug"),
        ("a1", "assistant", "u1", None, "done", "Looking."),
        ("tool:t1", "tool", None, "a1", "done", "print()"),
        ("tool:t2", "tool", None, "a1", "error", "a.py"),
        ("b1", "assistant", "a1", None, "done", ""),
        ("tool:t3", "tool", None, "b1", "done", "done"),
        ("c1", "assistant", "b1", None, "done", "Fixed."),
        ("cb", "system", "c1", None, "done", "Conversation compacted"),
        ("cs", "user", "cb", None, "done", "Summary: fixed a bug."),
        ("u2", "user", "cs", None, "done", "now add a test"),
        ("u3", "user", "cs", None, "done", "actually, add docs"),
        ("d1", "assistant", "u3", None, "done", ""),
        ("tool:t4", "tool", None, "d1", "error", None),
    ]


def test_session_head_and_id() -> None:
    """The head is the last main-chain record's node (the later sibling's branch); the id is sessionId."""
    session = _import(TRANSCRIPT).session
    assert (session.session_id, session.head) == ("s-1", "d1")
    assert [c.id for c in session.branch()] == ["u1", "a1", "b1", "c1", "cb", "cs", "u3", "d1"]


def test_an_empty_session_id_names_nothing() -> None:
    """An empty ``sessionId`` is passed over for the next non-empty one, or the file's name.

    The store refuses an empty id: a fuzzed log with one kept saving from working.
    """
    first, second = _user("u1", None, "hi"), _user("u2", "u1", "again")
    named = [{**first, "sessionId": ""}, {**second, "sessionId": "s-2"}]
    assert _import(named).session.session_id == "s-2"
    unnamed = json.dumps({**first, "sessionId": ""})
    assert import_text(unnamed, source_name="logs/abc.jsonl").unwrap().session.session_id == "abc"


def test_stats_are_pinned() -> None:
    """Records, nodes by role, tool calls, skipped records by type and the compaction are counted."""
    stats = _import(TRANSCRIPT).stats
    assert stats.records == len(TRANSCRIPT)
    assert dict(stats.nodes_by_role) == {"assistant": 4, "system": 1, "tool": 4, "user": 4}
    assert (stats.tool_calls, stats.unanswered_tool_calls, stats.compactions) == (4, 1, 1)
    assert dict(stats.skipped) == {
        "file-history-snapshot": 1,
        "progress": 1,
        "system:stop_hook_summary": 1,
    }
    assert (stats.bad_records, stats.dangling_parents, stats.microcompactions) == ((), 0, 0)


def test_split_response_is_one_assistant_node_with_metadata() -> None:
    """Records sharing message.id merge; thinking, model and the merged uuids are kept."""
    node = _import(TRANSCRIPT).session.graph.nodes["a1"]
    assert node.name == "claude-x"
    assert node.metadata_value() == {
        "message_id": "m1",
        "thinking": "hmm",
        "merged_uuids": ["a2", "a3", "a4"],
    }


def test_tool_nodes_carry_call_id_arguments_and_error_flags() -> None:
    """Tool metadata holds the provider's call id; an error result and a missing result are marked."""
    nodes = _import(TRANSCRIPT).session.graph.nodes
    assert (nodes["tool:t1"].name, nodes["tool:t1"].input_value()) == ("Read", {"path": "a.py"})
    assert nodes["tool:t1"].metadata_value() == {"tool_call_id": "t1"}
    assert nodes["tool:t2"].metadata_value() == {"tool_call_id": "t2", "is_error": True}
    assert nodes["tool:t4"].metadata_value() == {"tool_call_id": "t4", "result_missing": True}


def test_compaction_nodes_keep_their_figures() -> None:
    """The boundary keeps preTokens and its logical parent; the summary is flagged."""
    nodes = _import(TRANSCRIPT).session.graph.nodes
    assert nodes["cb"].name == "compact_boundary"
    assert nodes["cb"].metadata_value() == {
        "compaction": {"trigger": "auto", "preTokens": 1234},
        "pre_tokens": 1234,
        "logical_parent": "c1",
    }
    assert nodes["cs"].metadata_value() == {"compact_summary": True, "transcript_only": True}


def test_timestamps_become_epoch_seconds() -> None:
    """An ISO timestamp becomes created_at; a record without one gets 0.0."""
    nodes = _import(TRANSCRIPT).session.graph.nodes
    assert (nodes["u1"].created_at, nodes["u2"].created_at) == (1767225600.0, 0.0)


def test_usage_of_the_last_split_record_is_kept() -> None:
    """Split records repeat a growing usage; the node keeps the last one."""
    records = [
        _user("u1", None, "hi"),
        {**_assistant("a1", "u1", "m1", {"type": "text", "text": "a"}), "requestId": "r"},
        _assistant("a2", "a1", "m1", {"type": "text", "text": "b"}),
    ]
    records[1]["message"]["usage"] = {"input_tokens": 10, "output_tokens": 1}  # type: ignore[index]
    records[2]["message"]["usage"] = {"input_tokens": 10, "output_tokens": 7}  # type: ignore[index]
    node = _import(records).session.graph.nodes["a1"]
    assert node.output == "a\n\nb"
    assert node.metadata_value()["usage"] == {"input_tokens": 10, "output_tokens": 7}
    assert node.metadata_value()["request_id"] == "r"


def test_text_next_to_tool_results_is_a_user_node() -> None:
    """A user record with tool results and text fills the tools and still becomes a user message."""
    records = [
        _user("u1", None, "go"),
        _assistant("a1", "u1", "m1", _tool_use("t1", "Bash")),
        _user("r1", "a1", [_result("t1", "ok"), {"type": "text", "text": "stop"}]),
    ]
    session = _import(records).session
    assert _shape(session.graph)[-1] == ("r1", "user", "a1", None, "done", "stop")
    assert session.graph.nodes["tool:t1"].output == "ok"
    assert session.head == "r1"


def test_sidechain_records_do_not_move_the_head() -> None:
    """A sidechain (sub-agent) record is imported but the head stays on the main chain."""
    records = [
        _user("u1", None, "go"),
        _assistant("a1", "u1", "m1", {"type": "text", "text": "done"}),
        _user("x1", None, "sub-task", isSidechain=True),
    ]
    session = _import(records).session
    assert session.head == "a1"
    assert session.graph.nodes["x1"].metadata_value() == {"sidechain": True}


def test_a_parent_missing_from_the_file_makes_a_root() -> None:
    """A record whose parentUuid is not in the file becomes a root, and is counted."""
    result = _import([_user("u1", "elsewhere", "hi")])
    assert result.session.graph.roots[0] == "u1"
    assert result.stats.dangling_parents == 1
