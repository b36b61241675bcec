"""The CLI as a person meets it: names for specs, the bundled session, listings, messages, demo."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from ctxrules.cli.main import main
from ctxrules.cli.replay import _summarizer
from ctxrules.cli.stored_log import missing_session
from tests.live_loop import Loop, run_live

ROOT = Path(__file__).resolve().parents[2]


def test_replay_with_no_path_replays_the_bundled_session_under_a_named_spec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ctxrules replay --spec small-window` needs no path into the source tree."""
    store = tmp_path / "s.sqlite"
    assert (
        main(["replay", "--spec", "small-window", "--window", "32000", "--store", str(store)]) == 0
    )
    assert "tokens sent" in capsys.readouterr().out
    assert main(["show", str(store)]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["session", "format", "nodes", "first", "last", "title"]
    assert row.split()[1:3] == ["claude-code:small-window@32k", "42"]
    assert "2026-02-13 09:22" in row, "first node's time"
    assert row.endswith("…") or "changelog" in row, "a title from the first user message"


def test_show_limits_the_timeline_and_names_unknown_sessions_in_cli_terms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--limit cuts the timeline with a note; an unknown session points at `ctxrules show STORE`."""
    store = tmp_path / "s.sqlite"
    assert main(["replay", "--window", "32000", "--store", str(store)]) == 0
    capsys.readouterr()
    assert main(["show", str(store)]) == 0
    session_id = capsys.readouterr().out.splitlines()[1].split()[0]
    assert main(["show", str(store), session_id, "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("\ncommit ") + out.startswith("commit ") == 2
    assert out.endswith("(16 older commits not shown: --limit N shows more, 0 all)\n")
    assert main(["show", str(store), "nope"]) == 2
    err = capsys.readouterr().err
    assert err == f"no session 'nope' in {store}: `ctxrules show {store}` lists the sessions\n"
    assert "create_session" not in err


def test_report_without_plotly_stops_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without plotly, --report exits 2 naming the extra, and nothing was replayed or stored."""
    monkeypatch.setitem(sys.modules, "plotly", None)
    store = tmp_path / "s.sqlite"
    assert main(["replay", "--store", str(store), "--report", str(tmp_path / "r.html")]) == 2
    captured = capsys.readouterr()
    assert captured.err == "--report needs plotly: pip install 'ctxrules[report]'\n"
    assert captured.out == ""
    assert not store.exists()


def test_a_misspelt_spec_name_is_refused_with_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--spec defualt: exit 2, the built-in names, and the closest one."""
    assert main(["check", "--spec", "defualt"]) == 2
    assert "did you mean 'default'?" in capsys.readouterr().err


def test_summarizer_modules_are_found_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--summarizer mymod:fn imports mymod.py from the current folder, as pytest does."""
    (tmp_path / "my_summaries_for_test.py").write_text("def fn(prompt):\n    return 'sum'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    found = _summarizer("my_summaries_for_test:fn")
    assert callable(found)
    assert found(()) == "sum"  # type: ignore[operator]


def test_demo_shows_the_spec_tightening_and_the_saving(capsys: pytest.CaptureFixture[str]) -> None:
    """The demo prints each request beside the naive resend, the rules that acted, and the saving."""
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "capped" in out
    assert "tail_window" in out
    match = re.search(r"sent ([\d,]+) tokens in all instead of ([\d,]+)", out)
    assert match is not None
    sent, naive = (int(group.replace(",", "")) for group in match.groups())
    assert 0 < sent < naive


def test_migrate_from_a_store_that_is_not_there_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped source is one line and exit 2: no empty store made, "0 sessions" not said."""
    missing, target = tmp_path / "typo.sqlite", tmp_path / "new.sqlite"
    assert main(["migrate", str(missing), str(target)]) == 2
    err = capsys.readouterr().err
    assert "typo.sqlite" in err
    assert "No such file" in err
    assert len(err.splitlines()) == 1
    assert not missing.exists()
    assert not target.exists()
    folder = tmp_path / "a-folder"
    folder.mkdir()
    source = tmp_path / "real.sqlite"
    assert main(["replay", "--window", "32000", "--store", str(source)]) == 0
    capsys.readouterr()
    assert main(["migrate", str(source), str(folder)]) == 2
    assert "cannot write a file here (a folder)" in capsys.readouterr().err


def test_migrate_reads_its_source_and_makes_no_target_when_it_cannot_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty source stays empty, an unknown session is named as `show` names it; no target is made."""
    empty, target = tmp_path / "empty.sqlite", tmp_path / "dst.sqlite"
    empty.touch()
    assert main(["migrate", str(empty), str(target)]) == 2
    assert capsys.readouterr().err == (
        f"cannot open store '{empty}': the file is empty: not a ctxrules store\n"
    )
    assert empty.stat().st_size == 0
    assert not target.exists()
    source = tmp_path / "agent.sqlite"
    run_live(Loop(16_000, (1_200,) * 2), str(source), session="main")
    before = source.read_bytes()
    assert main(["migrate", str(source), str(target), "--session", "nope"]) == 2
    assert capsys.readouterr().err == missing_session(str(source), "nope") + "\n"
    assert not target.exists()
    assert main(["migrate", str(source), str(target)]) == 0
    assert capsys.readouterr().out.endswith(", verified\nmigrated 1 session\n")
    assert source.read_bytes() == before


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["show", "{store}", "main", "--limit", "-3"],
            "--limit: expected a whole number, 0 (all) or more, found '-3'",
        ),
        (
            ["inspect", "{store}", "--port", "99999"],
            "--port: expected a port from 0 to 65535 (0 picks a free one), found '99999'",
        ),
        (
            ["inspect", "{store}", "--port", "-1"],
            "--port: expected a port from 0 to 65535 (0 picks a free one), found '-1'",
        ),
        (
            ["replay", "--window", "99999999999999999999", "--store", ":memory:"],
            "--window: expected the model's context window, at most 10,000,000 tokens, found '99999999999999999999'",
        ),
    ],
)
def test_a_number_out_of_its_range_is_an_argument_error(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A negative limit, a port past 65535 or a window past any model's: exit 2, one line, nothing run."""
    store = tmp_path / "s.sqlite"
    store.touch()
    assert main([part.format(store=store) for part in argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"ctxrules {argv[0]}: argument {says} (see ctxrules {argv[0]} --help)\n"
