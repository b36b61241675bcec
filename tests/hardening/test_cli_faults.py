"""The CLI rule (issue 16): no command prints a traceback for bad input; exit 2 and one line."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from ctxrules.cli.guard import INTERNAL
from ctxrules.cli.main import main

ONE_USER = (
    '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"content":"hi"}}\n'
)
SURROGATE = (
    '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"content":"hi \\ud800"}}\n'
    '{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","content":[{"type":"text","text":"ok"}]}}\n'
)


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A zoo of bad (and edge) inputs in a scratch folder that is also the working directory."""
    monkeypatch.chdir(tmp_path)
    files = {
        "empty": b"",
        "binary": bytes(range(256)) * 4,
        "one_user": ONE_USER.encode(),
        "surrogate": SURROGATE.encode(),
        "bom_crlf": b"\xef\xbb\xbf" + ONE_USER.replace("\n", "\r\n").encode(),
        "bad_spec": b"[[rules]]\nuse = 3\n",
        "sqlite_foreign": b"",
    }
    paths = {}
    for name, data in files.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(data)
        paths[name] = str(path)
    with sqlite3.connect(paths["sqlite_foreign"]) as conn:
        conn.execute("CREATE TABLE t (x)")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    paths.update(missing=str(tmp_path / "missing.jsonl"), folder=str(tmp_path), fifo=str(fifo))
    paths["zero"] = "/dev/zero"
    return paths


def _commands(paths: dict[str, str]) -> list[list[str]]:
    """Every command over every input, plus the argument faults of the issue."""
    runs = []
    for path in paths.values():
        runs += [
            ["replay", path, "--store", ":memory:"],
            ["export", path],
            ["export", path, "--session", "s"],
            ["verify", path],
            ["show", path],
            ["check", path, "--examples", "1"],
        ]
    one = paths["one_user"]
    runs += [
        ["replay", one, "--window", "0"],
        ["replay", one, "--window", "-3"],
        ["replay", one, "--window", "many"],
        ["replay", one, "--report", paths["folder"], "--store", ":memory:"],
        ["replay", one, "--store", paths["folder"]],
        ["replay", one, "--spec", paths["fifo"]],
        ["replay", one, "--summarizer", "no.such.module:f", "--store", ":memory:"],
        ["check", paths["bad_spec"], "--examples", "0"],
        ["check", paths["bad_spec"], "--examples", "-3"],
        ["verify", one, "--spec", paths["binary"]],
        ["nonsense"],
    ]
    return runs


def test_no_command_prints_a_traceback_for_bad_input(
    inputs: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Every command over bad inputs: exit 0, 1 or 2; never a traceback; a 2 is one line."""
    for argv in _commands(inputs):
        status = main(argv)
        captured = capsys.readouterr()
        assert status != INTERNAL, (argv, captured.err)
        assert status in (0, 1, 2), (argv, status)
        assert "Traceback" not in captured.err, argv
        if status == 2:
            lines = captured.err.strip().splitlines()
            assert len(lines) >= 1, argv
            assert all(line.strip() for line in lines), argv


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["replay", "{one_user}", "--window", "0"], "--window"),
        (["check", "{bad_spec}", "--examples", "0"], "--examples"),
        (["verify", "/dev/zero"], "/dev/zero"),
        (["verify", "{fifo}"], "FIFO"),
        (["replay", "{one_user}", "--report", "{folder}"], "folder"),
        (["show", "{empty}"], "empty"),
    ],
)
def test_the_issue_reproducers_exit_2_with_one_line(
    inputs: dict[str, str], capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    """Faults 8 and 13: each prints exactly one line naming what is wrong, and exits 2."""
    status = main([part.format(**inputs) for part in argv])
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1, err
    assert says in err


def test_show_leaves_an_empty_file_empty(inputs: dict[str, str]) -> None:
    """Fault 9: `ctxrules show e.jsonl` does not turn an empty file into a store."""
    assert main(["show", inputs["empty"]]) == 2
    assert Path(inputs["empty"]).stat().st_size == 0


def test_replay_of_a_session_without_an_llm_call_is_stored(
    inputs: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Fault 7: replay of one user record stores the session instead of raising KeyError."""
    assert main(["replay", inputs["one_user"], "--store", "one.sqlite"]) == 0
    assert "stored session" in capsys.readouterr().out
    assert main(["show", "one.sqlite"]) == 0


def test_replay_and_export_of_lone_surrogates(
    inputs: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Fault 5: the issue's replay and export of a log with a lone surrogate both succeed."""
    assert main(["replay", inputs["surrogate"], "--store", "s.sqlite"]) == 0
    assert main(["export", inputs["surrogate"]]) == 0
    assert "\ufffd" in capsys.readouterr().out
