"""`ctxrules verify`: a recorded session is checked, and each violation is reported with its ids."""

from __future__ import annotations

import copy
from pathlib import Path

import attrs
import pytest

from ctxrules.check import Violation
from ctxrules.check.recorded import _turn_heads, graph_shape
from ctxrules.cli.demo import build_demo_session
from ctxrules.cli.main import main
from ctxrules.dag import Call, Graph, graph_to_jsonl


def _write(tmp_path: Path, graph: Graph) -> str:
    path = tmp_path / "session.jsonl"
    path.write_text(graph_to_jsonl(graph), encoding="utf-8")
    return str(path)


def test_a_clean_session_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The demo session verifies clean under the default spec."""
    session, _ = build_demo_session().unwrap()
    status = main(["verify", _write(tmp_path, session.graph), "--spec", "specs/default.toml"])
    assert status == 0
    assert capsys.readouterr().out.endswith("ok: 8 nodes, 0 violations\n")


def test_a_summary_node_in_the_dag_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Invariant 5: a node named like a summary item is a violation, with its id."""
    graph = Graph().append(Call("u1", "user", output="hi")).unwrap()
    graph = graph.append(
        Call("sm_abc", "assistant", output="[Summary] x", predecessor="u1")
    ).unwrap()
    status = main(["verify", _write(tmp_path, graph)])
    out = capsys.readouterr().out
    assert status == 1
    assert "invariant 5 (summary items only in commits) at sm_abc" in out


def test_a_tool_call_under_a_user_message_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Invariant 1 (shape): a tool call must hang off an assistant."""
    graph = Graph().append(Call("u1", "user", output="hi")).unwrap()
    graph = graph.append(Call("t1", "tool", name="ls", caller="u1")).unwrap()
    status = main(["verify", _write(tmp_path, graph)])
    assert status == 1
    assert (
        "invariant 1 (DAG append-only) at t1: expected a tool call under an assistant, found caller role user"
        in capsys.readouterr().out
    )


def test_unreadable_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A malformed line exits 2 with the line number."""
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "role": "user"}\n{oops\n', encoding="utf-8")
    assert main(["verify", str(path)]) == 2
    assert "line 2: invalid JSON" in capsys.readouterr().err


def test_a_seq_out_of_append_order_is_reported() -> None:
    """Invariant 1 (shape): a node whose seq is not its place in the append order, with both."""
    graph = Graph().append(Call("u1", "user", output="hi")).unwrap()
    graph = graph.append(Call("a1", "assistant", output="ok", predecessor="u1")).unwrap()
    assert graph_shape(graph) == []
    moved = copy.copy(graph.nodes["a1"])
    object.__setattr__(moved, "seq", 7)  # a corrupted record: seq is set only by append
    (found,) = graph_shape(attrs.evolve(graph, nodes=graph.nodes.set("a1", moved)))
    assert found == Violation(1, ("a1",), "seq 1 (append order)", "7")


def test_commits_are_checked_at_each_turn_end() -> None:
    """One commit per turn: the node before each user message, and the head."""
    graph = Graph()
    previous = None
    for node, role in (("u1", "user"), ("a1", "assistant"), ("u2", "user"), ("a2", "assistant")):
        graph = graph.append(Call(node, role, output=node, predecessor=previous)).unwrap()
        previous = node
    assert [call.id for call in _turn_heads(graph, "a2")] == ["a1", "a2"]


def test_a_store_written_with_another_ruler_verifies_with_its_tokenizer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Invariant 10: counts are checked with the ruler named by --tokenizer, not always cl100k."""
    from ctxrules import Context  # noqa: PLC0415 - the shell, only for this test
    from ctxrules.testing.responses import openai_response  # noqa: PLC0415
    from ctxrules.tokens import HeuristicCounter  # noqa: PLC0415

    store = tmp_path / "store.sqlite"
    with Context(model="gpt-4o", store=store, session="s", tokenizer=HeuristicCounter()) as ctx:
        ctx.add({"role": "user", "content": "Read the parser and fix the off-by-one error."})
        for i in range(3):
            ctx.openai()
            ctx.record(openai_response(i, "step", [(f"c{i}", "read_file", {"path": f"p{i}.py"})]))
            ctx.add_tool_result(f"c{i}", f"def parse_{i}(text):\n    return text.split(',')\n" * 20)
        ctx.openai()
    assert main(["verify", str(store)]) == 1
    out = capsys.readouterr().out
    assert "invariant 10 (one ruler)" in out
    assert "counted with tiktoken:cl100k_base; if the session was written with another" in out
    assert main(["verify", str(store), "--tokenizer", "heuristic"]) == 0
    assert capsys.readouterr().out.startswith("ok: ")


def test_an_unknown_tokenizer_is_named_with_the_choices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--tokenizer takes a tiktoken encoding or 'heuristic'; anything else exits 2, no traceback."""
    session, _ = build_demo_session().unwrap()
    assert main(["verify", _write(tmp_path, session.graph), "--tokenizer", "cl100k"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("--tokenizer 'cl100k': expected one of r50k_base")
    assert "heuristic" in err
