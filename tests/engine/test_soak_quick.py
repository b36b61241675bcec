"""A quick slice of the live-loop soak (``bench/soak.py``): `Context` in a scripted agent loop.

A few hundred calls per run, fake SDK responses with usage, tool outputs from the real
sessions (the bundled one when the shared folder is absent), a 5 MB output in every run,
parallel calls, error results, binary-looking text and recall calls. Each test asserts the
soak's goals on its figures; the per-turn time goal is left to the bench, where a run is
long enough for it to mean something.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import soak  # noqa: E402 - the harness lives in bench/

OUTPUTS = soak.real_outputs()


def _run(
    mode: str, store: str, window: int, provider: str, *, calls: int, tmp: Path
) -> dict[str, Any]:
    where = str(tmp / "soak.sqlite") if store == "sqlite" else None
    cell = soak.Cell(mode, store, window, provider)
    return soak.run_cell(cell, calls, where=where, big=(5,), outputs=OUTPUTS)


def _own_process(where: str, window: int, calls: int, big: int) -> dict[str, Any]:
    # Peak memory is a process's own: a run with a huge output gets a process of its own.
    command = [
        sys.executable,
        str(BENCH / "soak.py"),
        "--cell",
        f"sync,{'sqlite' if where else 'none'},{window},openai",
        "--calls",
        str(calls),
        "--big",
        str(big),
        "--where",
        where,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _assert_loop_goals(f: dict[str, Any], min_extension_pct: float = 90) -> None:
    assert f["exceptions"] == {}, f["first_exceptions"]
    assert f["over_window"] == 0
    assert f["extension_pct"] >= min_extension_pct, f
    assert f["undeclared_batch"] == 0
    assert f["breaks_unexplained"] == 0
    assert f["budget_under_share"] == []
    assert f["recall_answers"] > 0
    assert f["recall_whole"] == f["recall_answers"], f["recall_misses"]
    # The goal is 1 s (0.01 s measured); 5 s keeps a loaded CI machine from failing it while
    # still catching the 30 s of reading a whole output before the cap.
    assert all(seconds <= 5.0 for seconds in f["big_prepare_s"].values()), f["big_prepare_s"]


# At 32k the share sits on the goal (89.9-90.7 % by machine and by the sessions the tool
# outputs come from; bench/soak.py reports it against 90 % over 2,000 calls): the quick
# test guards it from falling, with the room a 200-call run needs.
@pytest.mark.parametrize(
    ("window", "provider", "min_extension_pct"),
    [(128_000, "openai", 90), (32_000, "anthropic", 88)],
)
def test_a_sync_loop_without_a_store_keeps_the_goals(
    window: int, provider: str, min_extension_pct: float, tmp_path: Path
) -> None:
    """200 sync calls with a 5 MB output: no exception, nothing over the window, extensions kept."""
    figures = _run("sync", "none", window, provider, calls=200, tmp=tmp_path)
    _assert_loop_goals(figures, min_extension_pct)


def test_an_async_loop_on_sqlite_keeps_the_goals(tmp_path: Path) -> None:
    """150 async calls on an embedded store (Anthropic shape, 32k): the same goals hold."""
    figures = _run("async", "sqlite", 32_000, "anthropic", calls=150, tmp=tmp_path)
    _assert_loop_goals(figures, 88)  # 32k sits on the goal: see above
    assert figures["store_mb"] > 0
    # The history is the stored session's export: the 5 MB output alone is more than 5 MB.
    assert figures["history_mb"] > 5
    assert abs(figures["store_x"] - figures["store_mb"] / figures["history_mb"]) < 0.02


def test_joined_outputs_are_real_text_of_about_the_size_asked() -> None:
    """``--output-chars``: real results run together, lengths around the mean asked, the same each run."""
    joined = soak.joined_outputs(OUTPUTS, 4_000)
    lengths = [len(text) for _, text in joined.items]
    assert all(1_000 <= n <= 7_000 for n in lengths)
    assert 3_400 <= sum(lengths) / len(lengths) <= 4_600
    # Each starts where a real result starts (those under 20 characters aside).
    starts = {text[:20] for _, text in OUTPUTS.items}
    assert sum(text[:20] in starts for _, text in joined.items) >= 0.9 * len(joined.items)
    assert joined == soak.joined_outputs(OUTPUTS, 4_000)


def test_a_50_mb_output_costs_little_without_a_store() -> None:
    """After a 50 MB tool output the next request takes ≤ 1 s and the run grows ≤ 300 MB."""
    figures = _own_process("", 32_000, 30, 50)
    assert figures["exceptions"] == {}, figures["first_exceptions"]
    assert figures["big_prepare_s"]["50 MB"] <= 5.0  # the goal is 1 s; see _assert_loop_goals
    assert figures["peak_growth_mb"] <= 300


def test_a_50_mb_output_on_sqlite_grows_memory_by_at_most_300_mb(tmp_path: Path) -> None:
    """With a SQLite store too, a 50 MB output keeps the run's peak growth ≤ 300 MB.

    It was ~780 MB: SQLite copied the 50 MB row in the triggers, the bound value, the record
    and the JSON check; the output is now stored in pieces (schema step 5).
    """
    figures = _own_process(str(tmp_path / "soak.sqlite"), 32_000, 30, 50)
    assert figures["exceptions"] == {}, figures["first_exceptions"]
    assert figures["peak_growth_mb"] <= 300


def test_a_16k_window_keeps_the_goals(tmp_path: Path) -> None:
    """At a 16k window the default spec keeps ≥ 90 % extensions and never cuts a request."""
    figures = _run("sync", "none", 16_000, "openai", calls=300, tmp=tmp_path)
    assert figures["snips"] == 0
    _assert_loop_goals(figures)


def _figures(window: int, summaries: int, tightened: int) -> dict[str, Any]:
    return {
        "window": window,
        "requests": 2_000,
        "summarizer_calls": summaries,
        "tightened": tightened,
        "exceptions": {},
        "over_window": 0,
        "extension_pct": 91.0,
        "undeclared_batch": 0,
        "breaks_unexplained": 0,
        "snips": 0,
        "budget_under_share_count": 0,
        "recall_whole": 1,
        "recall_answers": 1,
        "turn_ms_at_100": 1.0,
        "turn_ms_at_last": 1.0,
        "peak_growth_mb": 10.0,
        "big_prepare_s": {},
    }


@pytest.mark.parametrize(
    ("window", "summaries", "tightened", "missed"),
    [
        (16_000, 100, 5, False),
        (16_000, 101, 5, True),
        (32_000, 40, 0, True),
        (128_000, 400, 0, False),
    ],
)
def test_the_soak_holds_small_windows_to_one_summary_per_20_requests(
    window: int, summaries: int, tightened: int, *, missed: bool
) -> None:
    """At 16k and 32k a run misses a goal when aging never lands or it folds more than once per 20 calls."""
    said = soak.misses(_figures(window, summaries, tightened))
    assert bool(said) is missed, said
    assert all("small window" in line for line in said)


@pytest.mark.slow
def test_a_16k_window_folds_at_most_once_per_20_requests() -> None:
    """2,000 calls at 16k: aging lands and the summarizer runs at most once per 20 requests.

    It ran 104-108 times: every summary carried a 2,000-character list of the files written,
    some 700 tokens of a 6,500-token room, so each fold left less to grow into.
    """
    cell = soak.Cell("sync", "none", 16_000, "openai")
    figures = soak.run_cell(cell, 2_000, where=None, big=(), outputs=OUTPUTS)
    _assert_loop_goals(figures)
    assert figures["tightened"] > 0
    assert figures["summarizer_calls"] * 20 <= figures["requests"], figures["summarizer_calls"]


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A fresh schema on a throwaway PostgreSQL server; skipped where PostgreSQL is absent."""
    sys.path.insert(0, str(BENCH.parent / "tests" / "store"))
    import pg_server  # noqa: PLC0415 - beside the store tests

    pytest.importorskip("psycopg")
    bindir = pg_server.find_bin()
    if bindir is None:
        pytest.skip("no PostgreSQL binaries")
    server = pg_server.start(bindir)
    if isinstance(server, str):
        pytest.skip(server)
    yield pg_server.fresh_schema_url(server)
    server.stop()


def test_a_5_mb_output_on_postgresql_is_stored(postgres_url: str) -> None:
    """A 5 MB tool output is stored on PostgreSQL, and the loop goes on.

    Its words are indexed from the head: a tsvector holds at most 1 MB.
    """
    ctx = soak.ctxrules.Context(model="gpt-4o", window=32_000, store=postgres_url, session="pg")
    ctx.add({"role": "user", "content": "Build it."})
    ctx.openai()
    reply = ctx.record(soak._openai_reply(1, "Building.", [("c1", "bash", {})], (900, 0)))
    try:
        ctx.add_tool_result(reply.tool_calls[0].id, soak.huge(5))
        ctx.add({"role": "user", "content": "And now?"})
        assert ctx.openai()["messages"][-1]["content"] == "And now?"
        stored = ctx.session.graph.nodes[ctx.session.graph.order[-2]]
        assert len(str(stored.output_value())) >= 5_000_000
    finally:
        ctx.close()
