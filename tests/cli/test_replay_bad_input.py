"""`ctxrules replay` names every bad record and stops without --skip-bad; a too small window warns; a bad --store stops it first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxrules.cli.main import main
from ctxrules.cli.replay_report import cost_line
from ctxrules.importers import import_session
from ctxrules.store import open_store

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "ctxrules" / "data" / "sessions" / "entire-cli-5d_755497c182_0.jsonl"


def _corrupt(source: Path, line: int, target: Path) -> Path:
    """``source`` with its ``line``-th line replaced by a broken JSON object."""
    lines = source.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = '{"type": "user", "uuid": '
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def _ctxrules_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The bundled session as ctxrules JSON Lines, where later lines name earlier ones."""
    assert main(["export", str(BUNDLED)]) == 0
    path = tmp_path / "session.jsonl"
    path.write_text(capsys.readouterr().out, encoding="utf-8")
    return path


def test_a_corrupt_line_stops_the_replay_and_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --skip-bad: exit 2, each bad line on stderr with its number, nothing replayed."""
    log = _corrupt(BUNDLED, 20, tmp_path / "log.jsonl")
    status = main(["replay", str(log), "--store", ":memory:"])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    assert "Traceback" not in captured.err
    lines = captured.err.splitlines()
    assert lines[0].startswith(f"{log}: line 20: invalid JSON at column")
    assert lines[-1] == (
        f"{log}: {len(lines) - 1} bad record(s), nothing replayed; only 13 of the log's 18 LLM "
        "calls can be replayed, the rest are cut off from the last message by them; fix them, "
        "or pass --skip-bad to replay the rest"
    )


def test_skip_bad_reports_each_line_and_replays_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --skip-bad: the same lines as skipped, the replay runs, exit 0."""
    log = _corrupt(BUNDLED, 20, tmp_path / "log.jsonl")
    bad = import_session(log, skip_bad=True).unwrap().stats.bad_records
    status = main(["replay", str(log), "--store", ":memory:", "--skip-bad"])
    captured = capsys.readouterr()
    assert status == 0
    assert re.search(r"requests\s+│\s+13 │", captured.out)
    assert captured.err.splitlines() == [
        *(f"{log}: skipped {record}" for record in bad),
        (
            f"{log}: {len(bad)} bad record(s) skipped; only 13 of the log's 18 LLM calls can be "
            "replayed, the rest are cut off from the last message by them"
        ),
    ]


def test_every_line_a_corrupt_line_takes_with_it_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In ctxrules JSON Lines, the lines naming a lost node are each reported, by number."""
    log = _corrupt(_ctxrules_jsonl(tmp_path, capsys), 5, tmp_path / "broken.jsonl")
    bad = import_session(log, skip_bad=True).unwrap().stats.bad_records
    assert len(bad) > 10  # the corrupt line takes the nodes after it with it
    assert main(["replay", str(log), "--store", ":memory:"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[:-1] == [f"{log}: {record}" for record in bad]
    assert [int(re.search(r": line (\d+):", line)[1]) for line in err[:-1]] == [  # type: ignore[index]
        record.line for record in bad
    ]
    assert main(["replay", str(log), "--store", ":memory:", "--skip-bad"]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == f"{log}: {len(bad)} bad record(s) skipped"


def test_a_clean_log_reports_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """No bad record: nothing on stderr, exit 0, as before."""
    assert main(["replay", str(BUNDLED), "--store", ":memory:", "--window", "32000"]) == 0
    assert capsys.readouterr().err == ""


def test_a_window_under_any_models_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--window 100 exits 2 with one line suggesting 100000, instead of printing a saving."""
    assert main(["replay", str(BUNDLED), "--window", "100", "--store", ":memory:"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "ctxrules replay: argument --window: expected the model's context window, at least "
        "1,024 tokens (did you mean 100000?), found '100' (see ctxrules replay --help)\n"
    )


def test_a_window_that_forces_cuts_warns_that_the_cost_is_no_saving(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--window 1024 snips requests: a warning line on stderr, and the cost line says so."""
    # Without rules nothing shrinks a result before compaction does: at 1k some requests
    # are still over the budget after it (the default spec's sizes shrink enough at 1k).
    spec = tmp_path / "no-rules.toml"
    spec.write_text("version = 1\nrules = []\n")
    argv = ["replay", str(BUNDLED), "--window", "1024", "--store", ":memory:"]
    assert main([*argv, "--spec", str(spec)]) == 0
    captured = capsys.readouterr()
    snipped = re.search(r"compactions / snips\s+│\s+\d+ / (\d+) │", captured.out)
    assert snipped is not None
    cut = int(snipped[1])
    assert cut > 0
    assert f"of naive, {cut} requests cut to fit)" in captured.out
    assert captured.err == (
        f"warning: {cut} of 18 requests were cut to fit --window 1,024 (snipped), so the cost "
        "is not a saving; pass the model's real window\n"
    )


def _truncated_store(tmp_path: Path) -> Path:
    """A store cut in half, as a copy that was interrupted leaves it."""
    whole = tmp_path / "whole.sqlite"
    with open_store(str(whole)).unwrap() as store:
        store.create_session("s").unwrap()
    cut = tmp_path / "trunc.sqlite"
    data = whole.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    return cut


@pytest.mark.parametrize(
    ("store", "says"),
    [
        ("notes.txt", "cannot open store '{tmp}/notes.txt': file is not a database"),
        (
            "trunc.sqlite",
            "cannot open store '{tmp}/trunc.sqlite': database disk image is malformed",
        ),
        pytest.param(
            "/proc/nope/x.sqlite",
            "cannot create the store's folder for /proc/nope/x.sqlite: ",
            marks=pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="Linux's /proc"),
        ),
        (
            "postgresql://ctx@127.0.0.1:1/ctxrules",
            "cannot open store 'postgresql://ctx@127.0.0.1:1/ctxrules'",
        ),
    ],
)
def test_a_store_that_cannot_keep_the_run_stops_it_before_any_work(
    store: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A text file, a damaged store, a folder that cannot be made, an unreachable server: one line, nothing replayed."""
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    _truncated_store(tmp_path)
    target = store if "://" in store or store.startswith("/") else str(tmp_path / store)
    assert main(["replay", str(BUNDLED), "--store", target]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(says.format(tmp=tmp_path))
    assert len(captured.err.splitlines()) == 1
    assert notes.read_text(encoding="utf-8") == "my notes\n"


def test_an_in_memory_store_is_not_said_to_keep_the_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--store :memory:` keeps nothing after the replay, and the last line says so."""
    assert main(["replay", str(BUNDLED), "--store", ":memory:", "--window", "32000"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("not stored: --store :memory: keeps the run only while the replay runs\n")
    assert "stored session" not in out


@pytest.mark.parametrize(
    ("cost", "shown"),
    [(4.0, "0.04%"), (0.0, "0%"), (99.6, "1%"), (5_000.0, "50%"), (10_000.0, "100%")],
)
def test_a_cost_below_one_percent_of_naive_is_not_shown_as_zero(cost: float, shown: str) -> None:
    """A share under 1 % keeps one significant digit: 0.04 %, not 0 %."""
    figures = {"sent": 10.0, "naive": 1_000.0, "cost": cost, "naive_cost": 10_000.0, "snipped": 0.0}
    line = cost_line(figures, "gpt-4o")
    assert line.endswith(f"cost (gpt-4o) {cost:,.0f} vs 10,000 ({shown} of naive)")
