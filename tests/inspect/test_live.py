"""An open page follows an agent writing to the store within two seconds, on SQLite and PostgreSQL."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pg_server
import pytest
from inspect_pages import Server, open_page, shot, wait_for

from ctxrules import Context
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

#: How soon the page must show a write (the page polls every second).
FOLLOW_SECONDS = 2.0
TURNS = 3


def _writer(url: str) -> Context:
    clock = [1_000.0]

    def now() -> float:
        clock[0] += 1
        return clock[0]

    return Context(
        model="gpt-4o",
        window=16_000,
        store=url,
        session="live",
        tokenizer=HeuristicCounter(),
        clock=now,
    )


def _turn(ctx: Context, n: int) -> None:
    ctx.add({"role": "user", "content": f"Task {n}: read m{n}.py"})
    ctx.openai()
    call = (f"c{n}", "read_file", {"path": f"m{n}.py"})
    ctx.record(openai_response(n, f"Reading m{n}.", [call], (900 + n, 0)))
    ctx.add_tool_result(f"c{n}", f"def f{n}():\n    return {n}\n" * 10)


def _follow(page: Any, ctx: Context) -> list[float]:
    """Write turns; after each, the seconds until the page showed every node and request."""
    lags = []
    for n in range(2, 2 + TURNS):
        _turn(ctx, n)
        ctx.openai()  # the next request, so the timeline grows too
        nodes, requests = len(ctx.session.graph), 2 * n - 1
        start = time.monotonic()
        wait_for(
            page,
            f"document.querySelector('svg[data-nodes]')?.getAttribute('data-nodes') === '{nodes}'"
            f" && document.querySelectorAll('[data-request]').length === {requests}",
            timeout=FOLLOW_SECONDS + 3,
        )
        lags.append(time.monotonic() - start)
    return lags


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_page_follows_a_live_writer(
    backend: str,
    browser: Any,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    serve: Callable[..., Server],
) -> None:
    """Each turn the writer stores shows up in the history and the timeline within 2 s."""
    if backend == "sqlite":
        url = str(tmp_path / "live.sqlite")
    else:
        url = pg_server.fresh_schema_url(request.getfixturevalue("postgres"))
    ctx = _writer(url)
    try:
        _turn(ctx, 1)
        if backend == "sqlite":
            # The inspector opens the file while no writer holds it (no write-ahead log),
            # as when an agent starts after the page: it must still see the new writes.
            ctx.close()
            assert not Path(f"{url}-wal").exists()
        server = serve(url)
        open_page(browser, server.url)
        if backend == "sqlite":
            ctx = _writer(url)
        lags = _follow(browser, ctx)
    finally:
        ctx.close()
    # Shown with pytest -s: the figures of docs/inspect.md and the note.
    sys.stdout.write(
        f"{backend}: the page showed each turn after {[round(s, 2) for s in lags]} s\n"
    )
    assert max(lags) <= FOLLOW_SECONDS, lags
    live = browser.find_element("id", "live").text
    assert live.startswith("live")
    shot(browser, f"live-{backend}")
