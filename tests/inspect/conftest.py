"""Fixtures of the inspector's tests: stores made from a real session, the server, a browser.

The browser is the system's Chromium driven by Selenium through the system's chromedriver
(Debian: ``apt-get install chromium chromium-driver``; `.ci/run` installs both). Without
them the browser tests skip with the reason, except in CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
import pg_server
from inspect_pages import Server, browser_paths, real_store

from ctxrules.commit.vector import CHUNK
from ctxrules.inspect import source
from ctxrules.store import objects, open_store, stored_graph


@pytest.fixture(scope="session")
def real(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A SQLite store made from the real session (with a retry branch): its path and session."""
    path = str(tmp_path_factory.mktemp("real") / "store.sqlite")
    return path, real_store(path)


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    """Start servers on stores; each is stopped after the test."""
    started: list[Server] = []

    def start(store: str, *extra: str) -> Server:
        started.append(Server(store, *extra))
        return started[-1]

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium, one per test module."""
    paths = browser_paths()
    if paths is None:
        reason = "no Chromium and chromedriver: apt-get install chromium chromium-driver"
        if os.environ.get("CI"):
            pytest.fail(reason + " (CI must run the browser tests)")
        pytest.skip(reason)
    webdriver = pytest.importorskip("selenium.webdriver")
    service = pytest.importorskip("selenium.webdriver.chrome.service")

    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1800"):
        options.add_argument(argument)
    options.add_argument("--disable-dev-shm-usage")
    driver = webdriver.Chrome(options=options, service=service.Service(paths[1]))
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def postgres() -> Iterator[pg_server.Server]:
    """A throwaway PostgreSQL server (skipped where none is installed, as in tests/store)."""
    yield from pg_server.running()


def _write_long(path: str) -> None:
    """A 2,400-message session ``long`` and four requests, written through `Context`."""
    from ctxrules import Context  # noqa: PLC0415 - only these tests need a live session
    from ctxrules.testing.responses import openai_response  # noqa: PLC0415

    messages: list[dict[str, object]] = []
    for turn in range(800):
        call = {
            "id": f"b{turn}",
            "type": "function",
            "function": {"name": "read", "arguments": "{}"},
        }
        messages += [
            {"role": "user", "content": f"please do task {turn}"},
            {"role": "assistant", "content": f"ok {turn}", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"b{turn}", "content": f"def f{turn}(): pass\n" * 5},
        ]
    ctx = Context(model="gpt-4o", window=1_000_000, store=path, session="long")
    ctx.add(*messages)
    ctx.openai()
    for turn in range(3):
        ctx.add({"role": "user", "content": f"next step {turn}"})
        reply = ctx.record(openai_response(turn, f"step {turn}", [(f"c{turn}", "read", {})]))
        ctx.add_tool_result(reply.tool_calls[0].id, f"contents {turn}")
        ctx.openai()
    ctx.close()


@pytest.fixture(scope="session")
def long_plain(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A SQLite store of a 2,400-message session whose head is its last request's."""
    path = str(tmp_path_factory.mktemp("long_plain") / "store.sqlite")
    _write_long(path)
    return path, "long"


@pytest.fixture(scope="session")
def long_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A SQLite store of a 2,400-message session, four requests, and a retry of an early node."""
    path = str(tmp_path_factory.mktemp("long") / "store.sqlite")
    _write_long(path)
    store = open_store(path).unwrap()
    try:
        session = store.load_session("long").unwrap()
        old = session.graph.order[-20]  # a retry whose original is 20 rows back
        retried = session.retry(old, created_at=session.graph.nodes[old].created_at + 1)
        store.save_session(retried.unwrap(), expected_head=session.head).unwrap()
    finally:
        store.close()
    return path, "long"


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of the nodes and items the store decodes (what a long session must not grow)."""
    counts = {"nodes": 0, "items": 0}
    node, item = stored_graph.record_call, objects.item_from_row

    def one_node(*args: Any) -> Any:
        counts["nodes"] += 1
        return node(*args)

    def one_item(*args: Any, **kwargs: Any) -> Any:
        counts["items"] += 1
        return item(*args, **kwargs)

    monkeypatch.setattr(stored_graph, "record_call", one_node)
    monkeypatch.setattr(objects, "item_from_row", one_item)
    # Commits of this test's size are read chunk by chunk, as 100,000-item ones are.
    monkeypatch.setattr(source, "LAZY_FROM", 2 * CHUNK)
    return counts
