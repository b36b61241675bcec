"""Every recorded session in ../shared/data/sessions imports cleanly into a well-formed DAG."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrules.dag import Graph, Role, graph_to_jsonl
from ctxrules.importers import detect_format, import_session, import_text

#: The folders of SOURCES.md and the format each holds.
FOLDERS = {
    "claude-code": "claude-code",
    "claude-code-zh": "claude-code",
    "openai-chat": "openai-chat",
    "langchain": "langchain",
}

#: Compactions SOURCES.md names; every other file has none.
COMPACTIONS = {"38_ecf75f2f1d_0.jsonl": 1, "9b_04c3d92e38_4.jsonl": 1}


def _files(root: Path, folder: str) -> list[Path]:
    files = sorted(p for p in (root / folder).iterdir() if p.is_file())
    assert files, f"no files in {root / folder}"
    return files


def _raw_counts(path: Path, format_: str) -> tuple[int, int, int]:
    """Records, tool calls and compact boundaries, counted straight from the raw JSON."""
    text = path.read_text(encoding="utf-8")
    if format_ == "claude-code":
        records = [json.loads(line) for line in text.split("\n") if line.strip()]
        calls = sum(
            1
            for r in records
            if r.get("type") == "assistant"
            for block in r["message"]["content"]
            if isinstance(block, dict) and block.get("type") == "tool_use"
        )
        boundaries = sum(1 for r in records if r.get("subtype") == "compact_boundary")
        return len(records), calls, boundaries
    document = json.loads(text)
    messages = document["values"]["messages"] if format_ == "langchain" else document["messages"]
    calls = sum(len(m.get("tool_calls") or []) for m in messages)
    return len(messages), calls, 0


def test_every_file_lies_in_a_known_folder(shared_sessions: Path) -> None:
    """Each session file sits in one of the four folders SOURCES.md describes, so none goes untested."""
    folders = {p.parent.name for p in shared_sessions.rglob("*") if p.is_file()} - {"sessions"}
    assert folders == set(FOLDERS)


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_real_files_import_with_zero_errors(shared_sessions: Path, folder: str) -> None:
    """Every file is detected as its format and imports with no bad record and every record read."""
    for path in _files(shared_sessions, folder):
        text = path.read_text(encoding="utf-8")
        assert detect_format(text) == FOLDERS[folder], path.name
        result = import_session(path).unwrap()
        records, _, _ = _raw_counts(path, FOLDERS[folder])
        assert result.format == FOLDERS[folder], path.name
        assert result.stats.bad_records == (), path.name
        assert result.stats.records == records, path.name


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_real_files_have_one_tool_node_per_tool_call(shared_sessions: Path, folder: str) -> None:
    """The DAG holds exactly as many tool nodes as the raw log has tool calls, each under an assistant."""
    for path in _files(shared_sessions, folder):
        graph = import_session(path).unwrap().session.graph
        _, calls, _ = _raw_counts(path, FOLDERS[folder])
        tools = [node for node in graph.nodes.values() if node.role is Role.TOOL]
        assert len(tools) == calls, path.name
        for tool in tools:
            assert tool.predecessor is None, tool.id
            assert tool.caller is not None, tool.id
            assert graph.nodes[tool.caller].role is Role.ASSISTANT, tool.id


def _assert_conversation_shape(graph: Graph, head: str | None, name: str) -> None:
    conversation = [node for node in graph.nodes.values() if node.role is not Role.TOOL]
    for node in conversation:
        assert node.caller is None, (name, node.id)
        if node.predecessor is None:
            assert node.id in graph.roots, (name, node.id)
        else:
            assert node.predecessor in graph, (name, node.id)
    assert len(graph.roots) == 1, (name, list(graph.roots))
    assert head is not None, name
    assert head in graph, name
    assert graph.nodes[head].role is not Role.TOOL, name


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_real_files_form_one_conversation_tree(shared_sessions: Path, folder: str) -> None:
    """Non-tool nodes chain by predecessor from a single root, and the head is a conversation node."""
    for path in _files(shared_sessions, folder):
        session = import_session(path).unwrap().session
        _assert_conversation_shape(session.graph, session.head, path.name)


@pytest.mark.parametrize("folder", ["claude-code", "claude-code-zh"])
def test_claude_code_compactions_are_recognised(shared_sessions: Path, folder: str) -> None:
    """Each compact_boundary becomes a system node with its token count, followed by the flagged summary."""
    for path in _files(shared_sessions, folder):
        result = import_session(path).unwrap()
        graph = result.session.graph
        _, _, boundaries = _raw_counts(path, "claude-code")
        assert result.stats.compactions == boundaries == COMPACTIONS.get(path.name, 0), path.name
        for node in graph.nodes.values():
            if node.name == "compact_boundary":
                assert node.role is Role.SYSTEM
                assert isinstance(node.metadata["pre_tokens"], int)
                (summary,) = (graph.nodes[i] for i in graph.children_of(node.id))
                assert summary.role is Role.USER
                assert summary.metadata["compact_summary"] is True


def test_38_compaction_figures_match_sources_md(shared_sessions: Path) -> None:
    """SOURCES.md: 953 records, 154 tool calls and one compaction at 155,099 tokens."""
    result = import_session(shared_sessions / "claude-code" / "38_ecf75f2f1d_0.jsonl").unwrap()
    (boundary,) = (n for n in result.session.graph.nodes.values() if n.name == "compact_boundary")
    assert (result.stats.records, result.stats.tool_calls) == (953, 154)
    assert boundary.metadata["pre_tokens"] == 155_099
    assert boundary.id in {c.id for c in result.session.branch()}


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_real_files_round_trip_through_ctxrules_jsonl(shared_sessions: Path, folder: str) -> None:
    """An imported session written by graph_to_jsonl reads back as the same graph and head."""
    for path in _files(shared_sessions, folder):
        session = import_session(path).unwrap().session
        again = import_text(graph_to_jsonl(session.graph), source_name=path.name).unwrap()
        assert again.format == "ctxrules-jsonl"
        assert again.session.graph == session.graph, path.name
        assert again.session.head == session.head, path.name
