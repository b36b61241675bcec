"""`ctxrules replay`, `show` and `export` on the bundled session and on every shared real session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrules.cli.main import main
from ctxrules.dag import graph_from_jsonl
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.replay import replay
from ctxrules.importers import import_session
from ctxrules.spec import load_spec
from ctxrules.tokens import load_encoding

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "ctxrules" / "data" / "sessions" / "entire-cli-5d_755497c182_0.jsonl"
DEFAULT = load_spec(ROOT / "specs" / "default.toml").unwrap()
RULER = load_encoding().unwrap()


def test_replay_of_the_bundled_session_stores_it_and_prints_its_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's main job: exit 0, the table, the session in the store, and a timeline to show."""
    store = tmp_path / "store.sqlite"
    report = tmp_path / "report.html"
    status = main(
        [
            "replay",
            str(BUNDLED),
            "--window",
            "32000",
            "--store",
            str(store),
            "--report",
            str(report),
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert "tokens sent" in out
    assert "naive resend" in out
    assert report.read_text(encoding="utf-8").count("plotly") > 10
    assert main(["show", str(store)]) == 0
    listed = capsys.readouterr().out
    session_id, fmt, nodes = listed.splitlines()[1].split()[:3]
    assert (fmt, nodes) == ("claude-code:default@32k", "42")
    assert main(["show", str(store), session_id]) == 0
    timeline = capsys.readouterr().out
    assert timeline.count("\ncommit ") + timeline.startswith("commit ") == 18
    # The default spec never rewrites a history under 8,000 tokens (this one peaks at 4,881):
    # its requests only grow, so the cost equals the naive resend's, never more.
    assert "tail_window" not in timeline
    assert "cost (anthropic)" in out
    assert "(100% of naive)" in out
    small = tmp_path / "small.sqlite"
    spec = str(ROOT / "specs" / "small-window.toml")
    assert (
        main(["replay", str(BUNDLED), "--window", "32000", "--spec", spec, "--store", str(small)])
        == 0
    )
    capsys.readouterr()
    assert main(["show", str(small), session_id]) == 0
    assert "tail_window" in capsys.readouterr().out


def test_export_from_a_log_and_from_the_store_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Export turns a log into ctxrules JSON Lines, and the stored session exports the same graph."""
    store = tmp_path / "store.sqlite"
    assert main(["replay", str(BUNDLED), "--store", str(store)]) == 0
    capsys.readouterr()
    assert main(["export", str(BUNDLED)]) == 0
    from_log = capsys.readouterr().out
    session_id = import_session(BUNDLED).unwrap().session.session_id
    assert main(["export", str(store), "--session", session_id]) == 0
    from_store = capsys.readouterr().out
    assert graph_from_jsonl(from_log).unwrap() == graph_from_jsonl(from_store).unwrap()


def test_replay_creates_the_store_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's command on a fresh checkout: the default store's folder does not exist yet."""
    monkeypatch.chdir(tmp_path)
    assert main(["replay", str(BUNDLED), "--window", "32000"]) == 0
    assert "stored session" in capsys.readouterr().out
    assert (tmp_path / ".ctxrules" / "store.sqlite").is_file()


def test_replay_reports_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unreadable log exits 2 with the file named."""
    missing = tmp_path / "nope.jsonl"
    assert main(["replay", str(missing), "--store", str(tmp_path / "s.sqlite")]) == 2
    assert "nope.jsonl" in capsys.readouterr().err


# Slow (a minute: every real session, twice per window): CI runs it; the bundled session's
# replay above is the quick check.
@pytest.mark.slow
@pytest.mark.parametrize("window", [32_000, 200_000])
def test_every_real_session_replays_within_the_window(
    shared_sessions: Path, window: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every request fits the window, no tool pair is orphaned, and the command prints its figures.

    The cache contract too, under the Anthropic profile: no session costs more than the
    naive resend, all together at most 0.45 of it, and 85 % of requests extend the previous.
    """
    cost = naive = extensions = count = 0.0
    for path in sorted(p for p in shared_sessions.glob("*/*") if p.suffix in (".json", ".jsonl")):
        session = import_session(path, skip_bad=True).unwrap().session
        requests = replay(
            session, DefaultContextEngine(pipeline=DEFAULT, tokenizer=RULER), window=window
        )
        assert requests, path.name
        assert max(r.sent for r in requests) <= window, path.name
        assert sum(r.protocol_violations for r in requests) == 0, path.name
        assert sum(r.cost for r in requests) <= sum(r.naive_cost for r in requests), path.name
        cost += sum(r.cost for r in requests)
        naive += sum(r.naive_cost for r in requests)
        extensions += sum(r.extends for r in requests)
        count += len(requests)
        status = main(
            ["replay", str(path), "--window", str(window), "--store", str(tmp_path / "s.sqlite")]
        )
        out = capsys.readouterr().out
        assert status == 0, path.name
        assert f"tokens sent {sum(r.sent for r in requests):,}" in out, path.name
    assert cost <= 0.45 * naive
    assert extensions >= 0.85 * count


def test_verify_checks_a_store_and_its_commits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctxrules verify on a store: the stored graph and every stored commit pass the invariants."""
    store = tmp_path / "store.sqlite"
    assert main(["replay", str(BUNDLED), "--window", "32000", "--store", str(store)]) == 0
    capsys.readouterr()
    assert main(["verify", str(store), "--spec", str(ROOT / "specs" / "default.toml")]) == 0
    assert capsys.readouterr().out.endswith("ok: 42 nodes, 0 violations\n")


def test_replay_prints_fidelity_and_its_json(capsys: pytest.CaptureFixture[str]) -> None:
    """The table has the fidelity rows; with --json stdout is one document with every request's."""
    assert main(["replay", str(BUNDLED), "--store", ":memory:"]) == 0
    out = capsys.readouterr().out
    assert "references used next (from tool results)" in out
    assert "requests naming every file written" in out
    assert main(["replay", str(BUNDLED), "--store", ":memory:", "--json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert "tokens sent" in captured.err
    assert document["totals"]["references"] == sum(
        r["fidelity"]["references"] for r in document["requests"]
    )
    assert len(document["requests"]) == document["totals"]["requests"] == 18
    assert document["totals"]["references"] > 0


def test_replay_with_summaries_in_the_background_reports_the_turns_that_waited(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--summary-latency replays with simulated background summaries; a bad value exits 2."""
    args = ["replay", str(BUNDLED), "--window", "32000", "--store", ":memory:"]
    assert main([*args, "--summary-latency", "5"]) == 0
    out = capsys.readouterr().out
    assert "turns that waited for a summary" in out
    assert "summarizer cost" in out
    assert main([*args, "--summary-latency", "-1"]) == 2
    assert "expected seconds >= 0, got '-1'" in capsys.readouterr().err


def test_runs_by_other_specs_or_windows_are_kept_apart_and_a_rerun_adds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each run of one log by another spec or window is kept in a session of its own.

    Replayed into one session, a second spec's commits came after the first's: `show` and
    `inspect` showed whichever run was stored last, and running the first again stored nothing.
    """
    from ctxrules.store import open_store  # noqa: PLC0415 - only this test reads the store

    store = str(tmp_path / "s.sqlite")
    runs = [
        ("default", "16000"),
        ("small-window", "16000"),
        ("default", "16000"),
        ("default", "32000"),
    ]
    said = []
    for spec, window in runs:
        argv = ["replay", str(BUNDLED), "--spec", spec, "--window", window, "--store", store]
        assert main(argv) == 0
        said.append(capsys.readouterr().out.splitlines()[-1])
    base = said[0].split()[2]
    assert said[2] == said[0] == f"stored session {base} in {store}"
    assert said[1].startswith(f"stored session {base}@")
    assert said[1].endswith(f"({base} holds a run of another log, spec, window or provider)")
    assert said[3].split()[2] not in (base, said[1].split()[2])
    alone = str(tmp_path / "alone.sqlite")
    argv = ["replay", str(BUNDLED), "--spec", "default", "--window", "16000", "--store", alone]
    assert main(argv) == 0
    capsys.readouterr()

    def commits(path: str) -> tuple[dict[str, object], list[str]]:
        opened = open_store(path, read_only=True).unwrap()
        try:
            sessions = {s.id: s.metadata for s in opened.list_sessions().unwrap()}
            return sessions, [c.id for c in opened.commits_for(base).unwrap()]
        finally:
            opened.close()

    sessions, shared = commits(store)
    assert len(sessions) == 3
    assert sessions[base]["replay_run"]["spec"] == "default"  # type: ignore[index]
    # The first run's session holds that run's commits and no other's.
    assert shared == commits(alone)[1]
    assert main(["show", store]) == 0
    listing = capsys.readouterr().out
    assert "claude-code:small-window@16k" in listing
    assert "claude-code:default@32k" in listing


def test_two_logs_under_one_session_id_are_kept_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`main` of two stores replayed into one store: two sessions, not one session with two branches."""
    from ctxrules import Context  # noqa: PLC0415 - only this test writes live sessions
    from ctxrules.store import open_store  # noqa: PLC0415 - see above
    from ctxrules.testing.responses import openai_response  # noqa: PLC0415 - see above

    sources = []
    for word in ("alpha", "beta"):
        path = str(tmp_path / f"{word}.sqlite")
        with Context(model="gpt-4o", store=path, window=16_000, clock=lambda: 1_000.0) as ctx:
            ctx.add({"role": "user", "content": f"task {word}"})
            ctx.openai()
            reply = ctx.record(openai_response(0, word, [("c0", "read_file", {"path": "a.py"})]))
            ctx.add_tool_result(reply.tool_calls[0].id, f"{word} output\n" * 30)
            ctx.openai()
        sources.append(path)
    out = str(tmp_path / "out.sqlite")
    said = []
    for path in (*sources, sources[0]):
        assert main(["replay", path, "--session", "main", "--store", out]) == 0
        said.append(capsys.readouterr().out.splitlines()[-1].split()[2])
    assert said[0] == said[2] == "main.replay"
    assert said[1].startswith("main.replay@")
    with open_store(out, read_only=True).unwrap() as store:
        titles = {s.id: s.title for s in store.list_sessions().unwrap()}
    assert titles == {"main.replay": "task alpha", said[1]: "task beta"}
