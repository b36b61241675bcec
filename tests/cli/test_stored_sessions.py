"""`ctxrules replay` and `export` given a store: a live session replayed by name, or told how."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import attrs
import pytest

from ctxrules.cli.main import main
from ctxrules.cli.stored_log import missing_session, names_store, pins_asked, replay_id
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import graph_from_jsonl
from ctxrules.store import open_store
from tests.live_loop import Loop, run_live

TURNS = 12
#: Twelve turns at 16k: each reads a file, then answers.
LOOP = Loop(16_000, (1_200,) * TURNS)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def live_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding two sessions an agent loop wrote."""
    store = tmp_path_factory.mktemp("live") / "agent.sqlite"
    run_live(LOOP, str(store), session="main")
    run_live(LOOP, str(store), session="other")
    return store


def test_a_stored_session_replays_by_name_and_leaves_the_store_as_it_was(
    live_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every LLM call of the live session is replayed; the store read is not written."""
    before = _digest(live_store)
    args = ["replay", str(live_store), "--session", "main", "--window", "16000"]
    assert main([*args, "--store", ":memory:", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["source"] == "agent.sqlite main"
    assert found["totals"]["requests"] == 2 * TURNS
    assert found["totals"]["over_window"] == 0
    assert main([*args, "--store", ":memory:"]) == 0
    out = capsys.readouterr().out
    assert "0 invariant-16 violations" in out
    # What the replay sends beside the history is said first: the live loop's frame.
    assert out.startswith(
        "as the live loop sent it: gpt-4o, window 16,000, a system prompt of 0 tokens, 0 tool schemas\n"
    )
    assert "another spec" not in out
    # Another spec than the live loop's: the replay says its figures are that spec's.
    assert main([*args, "--store", ":memory:", "--spec", "small-window"]) == 0
    assert "the live loop ran another spec (rules version " in capsys.readouterr().out
    assert _digest(live_store) == before


def test_a_replay_stored_back_gets_its_own_id_and_the_live_head_stays(
    live_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stored into the store it came from, the run is ``SESSION.replay``; the session's head is kept."""
    store = tmp_path / "copy.sqlite"
    store.write_bytes(live_store.read_bytes())
    opened = open_store(str(store)).unwrap()
    head = opened.get_head("main").unwrap()
    nodes = opened.export_jsonl("main").unwrap()
    opened.close()
    assert main(["replay", str(store), "--session", "main", "--store", str(store)]) == 0
    assert f"stored session {replay_id('main')} in {store}" in capsys.readouterr().out
    opened = open_store(str(store)).unwrap()
    try:
        assert opened.get_head("main").unwrap() == head
        sessions = sorted(info.id for info in opened.list_sessions().unwrap())
        assert sessions == ["main", "main.replay", "other"]
        # The replayed session holds the very messages of the live one.
        replayed = graph_from_jsonl(opened.export_jsonl("main.replay").unwrap()).unwrap()
        assert replayed.nodes == graph_from_jsonl(nodes).unwrap().nodes
    finally:
        opened.close()


@pytest.mark.parametrize("command", ["replay", "export"])
def test_a_store_without_a_session_names_the_option_and_the_sessions(
    command: str, live_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not "not UTF-8 text at byte 31": what to pass, and the sessions to choose from."""
    assert main([command, str(live_store)]) == 2
    err = capsys.readouterr().err
    assert "is a ctxrules store, not a recorded log" in err
    assert "--session ('main', 'other')" in err
    assert "UTF-8" not in err
    assert "Traceback" not in err


def test_an_unknown_session_or_a_log_with_a_session_is_refused_with_the_way_out(
    live_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A session the store lacks points at `ctxrules show`; ``--session`` on a log says it is a log."""
    assert main(["replay", str(live_store), "--session", "nope"]) == 2
    assert f"no session 'nope' in {live_store}: `ctxrules show" in capsys.readouterr().err
    log = tmp_path / "main.jsonl"
    assert main(["export", str(live_store), "--session", "main"]) == 0
    log.write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["replay", str(log), "--session", "main"]) == 2
    assert "is a recorded log, not a store" in capsys.readouterr().err


def test_a_store_is_told_from_a_log_by_its_header_url_or_name(
    live_store: Path, tmp_path: Path
) -> None:
    """A SQLite file whatever its name, a store URL, a file named as a store even when empty; not a log or a missing file."""
    renamed = tmp_path / "session.jsonl"
    renamed.write_bytes(live_store.read_bytes())
    empty, empty_log = tmp_path / "empty.sqlite", tmp_path / "empty.jsonl"
    empty.touch()
    empty_log.touch()
    log = tmp_path / "log.jsonl"
    log.write_text('{"id": "u1", "role": "user", "content": "hi"}\n', encoding="utf-8")
    assert names_store(str(renamed))
    assert names_store("postgresql://me@db/ctx")
    assert names_store("sqlite:////tmp/x.db")
    assert names_store(str(empty))
    assert not names_store("redis://cache/0")
    assert not names_store(str(log))
    assert not names_store(str(empty_log))
    assert not names_store(str(tmp_path / "missing.sqlite"))


def test_verify_refuses_what_show_refuses_and_names_a_missing_session(
    live_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty or foreign file meant as a store, or an empty log, is no pass: exit 2 and the line `show` or `export` gives."""
    empty, text = tmp_path / "e.sqlite", tmp_path / "notes.sqlite"
    empty.touch()
    text.write_text("not a database\n", encoding="utf-8")
    for store in (empty, text):
        assert main(["show", str(store)]) == 2
        shown = capsys.readouterr().err
        for argv in (["verify", str(store)], ["verify", str(store), "--session", "x"]):
            assert main(argv) == 2
            assert capsys.readouterr().err == shown
    assert empty.stat().st_size == 0
    empty_log = tmp_path / "e.jsonl"
    empty_log.touch()
    assert main(["export", str(empty_log)]) == 2
    exported = capsys.readouterr().err
    assert main(["verify", str(empty_log)]) == 2
    assert capsys.readouterr().err == exported == f"{empty_log}: empty input: nothing to import\n"
    assert main(["verify", str(live_store), "--session", "nope"]) == 2
    assert capsys.readouterr().err == missing_session(str(live_store), "nope") + "\n"


def test_a_stored_session_is_priced_as_the_inspector_prices_it(
    live_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under the session's model's cache profile (gpt-4o reads at 0.5x), named in the cost line; --provider overrides it."""
    testclient = pytest.importorskip("starlette.testclient", reason="the [inspect] extra")
    from ctxrules.inspect.read import Reader  # noqa: PLC0415 - after the extra is known
    from ctxrules.inspect.server import build_app  # noqa: PLC0415 - needs the extra

    args = ["replay", str(live_store), "--session", "main", "--store", ":memory:"]
    assert main([*args, "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)["totals"]["cost"]
    reader = Reader(open_store(str(live_store), read_only=True).unwrap(), 200_000)
    try:
        client = testclient.TestClient(build_app(reader), base_url="http://127.0.0.1")
        rows = client.get("/api/sessions").json()
    finally:
        reader.close()
    assert round(replayed) == next(row["cost"] for row in rows if row["id"] == "main") > 0
    assert main(args) == 0
    assert f"cost (gpt-4o) {replayed:,.0f} vs " in capsys.readouterr().out
    assert main([*args, "--provider", "openai"]) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if s.startswith("tokens sent"))
    assert "cost (openai) " in line
    assert f"cost (openai) {replayed:,.0f} vs " not in line


def test_a_live_session_is_listed_as_context(
    live_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ctxrules show` names where each session came from: a live loop's says ``context``."""
    assert main(["show", str(live_store)]) == 0
    rows = [line.split()[:2] for line in capsys.readouterr().out.splitlines()[1:]]
    assert rows == [["main", "context"], ["other", "context"]]


def test_pins_are_dated_by_the_first_stored_commit_that_shows_them() -> None:
    """A pin is asked at the head of the commit that first holds it pinned, an unpin where it stops."""
    items = [ContextItem(f"n{k}", "user", rendered=f"message {k}") for k in range(200)]
    commits, commit = [], ContextCommit("s")
    for k, item in enumerate(items):
        commit = attrs.evolve(commit.append_items([item]), head_node_id=item.source_node_id)
        if k == 3:
            commit = commit.replace_items({1: commit.items[1].pin()})
        if k == 150:
            commit = commit.replace_items({1: commit.items[1].unpin()})
        commits.append(commit)
    assert pins_asked(commits) == {"n3": (("n1", True),), "n150": (("n1", False),)}
