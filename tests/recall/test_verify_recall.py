"""`ctxrules verify` checks invariant 16 on stores (offloaded blobs included) and on exports."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyrsistent import pmap

from ctxrules.check import recoverable
from ctxrules.cli.main import main
from ctxrules.dag import Session, graph_to_jsonl
from ctxrules.generation import ensure_latest_commit
from ctxrules.recall import handle_for, offload
from ctxrules.rules import Facts, Pipeline
from ctxrules.spec import load_spec
from ctxrules.store import SqliteStore

HUGE = "".join(f"row {i}\n" for i in range(2000))


def _session() -> Session:
    session = Session("s").send("user", "dump the table").unwrap()
    session = session.send("assistant", "running").unwrap()
    session = session.record_call(
        session.head or "", "sql", {"q": "select *"}, HUGE, metadata={"tool_call_id": "c1"}
    ).unwrap()
    return session.send("assistant", "done").unwrap()


def _store(tmp_path: Path, *, tamper: bool) -> tuple[str, str]:
    session = _session()
    pipeline = load_spec(Path("specs/default.toml")).unwrap()
    commit, _ = ensure_latest_commit(
        pmap(), session.graph, session.head or "", pipeline, Facts(), session_id="s"
    ).unwrap()
    path = str(tmp_path / "store.sqlite")
    tool = next(c.id for c in session.graph.nodes.values() if c.role.value == "tool")
    with SqliteStore.open(path).unwrap() as store:
        store.save_session(session, commits=[commit]).unwrap()
        if tamper:
            store.put_blob("s", handle_for(tool), HUGE.replace("row 7", "row 8")).unwrap()
        else:
            assert offload(store, "s", commit, session.graph).unwrap() == 1
    return path, tool


def test_a_store_with_its_offloaded_originals_verifies_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A capped result offloaded whole: the store passes, invariant 16 included."""
    path, _ = _store(tmp_path, tamper=False)
    assert main(["verify", path, "--spec", "specs/default.toml"]) == 0
    assert capsys.readouterr().out.startswith("ok:")


def test_an_offloaded_original_that_differs_from_the_dag_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Invariant 16: a blob that is not the original byte for byte fails verify, naming the item."""
    path, tool = _store(tmp_path, tamper=True)
    assert main(["verify", path]) == 1
    out = capsys.readouterr().out
    assert f"invariant 16 (recoverability) at {tool}, {handle_for(tool)}" in out
    assert "other text in the blob store" in out


def test_an_export_is_checked_with_the_spec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSON Lines export verifies clean with handles on, and fails with handles off."""
    path = tmp_path / "session.jsonl"
    path.write_text(graph_to_jsonl(_session().graph), encoding="utf-8")
    assert main(["verify", str(path), "--spec", "specs/default.toml"]) == 0
    off = tmp_path / "off.toml"
    off.write_text(
        '[[rules]]\nuse = "cap_tool_result"\nparams = { handles = false }\n', encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["verify", str(path), "--spec", str(off)]) == 1
    assert "the handle named in the item's text" in capsys.readouterr().out


def test_a_store_whose_session_attached_another_verifies_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An attached copy capped in the attaching session resolves to the source commit's text, loaded from the store."""
    other = Session("other").send("user", "dump it").unwrap().send("assistant", "ok").unwrap()
    other = other.record_call(
        other.head or "", "sql", {"q": "*"}, HUGE, metadata={"tool_call_id": "c9"}
    ).unwrap()
    source, _ = ensure_latest_commit(
        pmap(), other.graph, other.head or "", Pipeline(), Facts(), session_id="other"
    ).unwrap()
    session = Session("s").send("user", "use the other dump").unwrap().attach(source).unwrap()
    session = session.send("assistant", "read it").unwrap()
    pipeline = load_spec(Path("specs/default.toml")).unwrap()
    commit, _ = ensure_latest_commit(
        pmap(),
        session.graph,
        session.head or "",
        pipeline,
        Facts(),
        session_id="s",
        sources={source.id: source},
    ).unwrap()
    assert any(i.attached_from and i.state.value != "full" for i in commit.items)
    # Without the source commit the capped copy cannot be checked: verify must load it.
    assert recoverable(commit, session.graph) != []
    path = str(tmp_path / "store.sqlite")
    with SqliteStore.open(path).unwrap() as store:
        store.save_session(other, commits=[source]).unwrap()
        store.save_session(session, commits=[commit]).unwrap()
    assert main(["verify", path, "--session", "s"]) == 0
    assert capsys.readouterr().out.startswith("ok:")
