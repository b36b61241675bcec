"""A turn through `ctxrules.Context` as a persistent user pays for it: no store, SQLite, PostgreSQL.

One turn is what an agent loop does per model call: add the user's message, record a
response with a tool call, add the tool's result, build the next ``openai()`` request;
with a store, the turn is one transaction, at the request (the default durability). The
session is first filled to 1k, 10k or 100k messages (100k is `bench_large`). ``extra_info``
keeps what a turn wrote (the commit objects' rows and bytes of the last turn), and the
resume benchmarks open the stored session in a new `Context` and build its next request:
in this process, and in a fresh one (``resume_process.py``), where its CPU time and peak
memory are set beside what the whole history occupies in memory once read.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxrules.tokens import load_encoding

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "store"))

from store_loop import Loop

BACKENDS = ("none", "sqlite", "postgresql")
ROUNDS = {1_000: 20, 10_000: 10, 100_000: 5}


@pytest.fixture(scope="session")
def pg_url_maker() -> Iterator[Callable[[], str] | None]:
    """Fresh schemas on one throwaway PostgreSQL server, or None where there is none."""
    try:
        import pg_server  # noqa: PLC0415 - beside the store tests
        import psycopg  # noqa: F401, PLC0415 - the extra may be missing
    except ImportError:
        yield None
        return
    bindir = pg_server.find_bin()
    server = pg_server.start(bindir) if bindir is not None else None
    if server is None or isinstance(server, str):
        yield None
        return
    yield lambda: pg_server.fresh_schema_url(server)
    server.stop()


@pytest.fixture(scope="session")
def loops(pg_url_maker: Callable[[], str] | None) -> Iterator[Callable[[str, int], Loop]]:
    """A getter of the filled session of each backend and size, each filled once per run."""
    ruler = load_encoding("cl100k_base").unwrap()
    made: dict[tuple[str, int], Loop] = {}
    with tempfile.TemporaryDirectory() as folder:

        def get(backend: str, size: int) -> Loop:
            if (backend, size) not in made:
                if backend == "postgresql" and pg_url_maker is None:
                    pytest.skip("no PostgreSQL server (binaries or psycopg missing)")
                url = {
                    "none": None,
                    "sqlite": str(Path(folder) / f"{size}.sqlite"),
                    "postgresql": pg_url_maker() if pg_url_maker else None,
                }[backend]
                made[(backend, size)] = Loop(url, size, ruler)
            return made[(backend, size)]

        yield get
        for loop in made.values():
            loop.ctx.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_context_turn(
    benchmark: Any, loops: Callable[[str, int], Loop], backend: str, size: int
) -> None:
    """One agent turn through `Context`, with each store or none."""
    loop = loops(backend, size)
    request = benchmark.pedantic(loop.one_turn, rounds=ROUNDS[size], iterations=1, warmup_rounds=1)
    keeper = loop.ctx._keeper  # noqa: SLF001 - what the last flush wrote, kept for the tests
    written = keeper.last_written if keeper is not None else None
    benchmark.extra_info.update(
        kind=f"context_turn_{backend}",
        size=size,
        object_rows=written.object_rows if written else 0,
        object_bytes=written.object_bytes if written else 0,
    )
    assert request["messages"]


@pytest.mark.parametrize("backend", BACKENDS[1:])
def test_context_resume(
    benchmark: Any, loops: Callable[[str, int], Loop], backend: str, size: int
) -> None:
    """A new process's first request: open the stored session in a `Context`, build ``openai()``."""
    loop = loops(backend, size)
    expected = loop.ctx.openai()

    def resume() -> dict[str, object]:
        ctx = loop.open()
        try:
            return ctx.openai()
        finally:
            ctx.close()

    request = benchmark.pedantic(resume, rounds=3 if size < 100_000 else 1, iterations=1)
    benchmark.extra_info.update(kind=f"context_resume_{backend}", size=size)
    assert request["messages"] == expected["messages"]


def _fresh(store: str, *flags: str) -> dict[str, object]:
    """One run of ``resume_process.py`` in a new interpreter: its JSON line."""
    script = Path(__file__).with_name("resume_process.py")
    ran = subprocess.run(  # noqa: S603 - our own script, with this interpreter
        [sys.executable, str(script), store, *flags],
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, object] = json.loads(ran.stdout.splitlines()[-1])
    return found


def test_resume_in_a_fresh_process(
    benchmark: Any, loops: Callable[[str, int], Loop], size: int, tmp_path: Path
) -> None:
    """A new process resumes the stored session: the same request, at most twice the history's memory."""
    loop = loops("sqlite", size)
    expected = tmp_path / "expected.json"
    expected.write_text(json.dumps(loop.ctx.openai()["messages"]))
    store, now = str(loop.url), f"{1_000.0 + loop.turn}"
    resumed = benchmark.pedantic(
        lambda: _fresh(store, "--expected", str(expected), "--now", now), rounds=1, iterations=1
    )
    traced = _fresh(store, "--trace", "--now", now)
    history = _fresh(store, "--history", "--trace")
    benchmark.extra_info.update(
        kind="resume_fresh_process_sqlite",
        size=size,
        resume_cpu_s=resumed["cpu"],
        resume_peak_mib=resumed["peak_mib"],
        resume_traced_peak_mib=traced["traced_mib"],
        history_traced_mib=history["traced_mib"],
    )
    assert resumed["same"] is True
    assert float(traced["traced_mib"]) <= 2 * float(history["traced_mib"])  # type: ignore[arg-type]
