"""The page's URL, sessions another writer starts, and the cached prefix in a long request.

The URL names the session shown; a new session appears in the list; the dashed line of the
cached prefix is drawn in a request listed from a later position.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_pages import Server, open_page, wait_for

from ctxrules import Context
from ctxrules.inspect.read import Reader
from ctxrules.store import open_store
from ctxrules.testing.responses import openai_response


def _session(path: Path, name: str) -> None:
    with Context(model="gpt-4o", window=16_000, store=str(path), session=name) as ctx:
        ctx.add({"role": "user", "content": f"task of {name}"})
        ctx.openai()
        ctx.record(openai_response(0, "reading", [("c0", "read_file", {"path": "a.py"})]))
        ctx.add_tool_result("c0", "def a(): pass\n")
        ctx.openai()


def _errors(browser: Any) -> list[Any]:
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def _served(
    browser: Any, tmp_path: Path, serve: Callable[..., Server], *names: str, url: str = ""
) -> Path:
    """A store holding a short session of each name, its page open in the browser."""
    path = tmp_path / "s.sqlite"
    for name in names:
        _session(path, name)
    server = serve(str(path))
    browser.get("about:blank")
    browser.get_log("browser")
    open_page(browser, server.url + url)
    return path


def test_an_unknown_session_in_the_url_is_said_and_the_hash_opens_sessions(
    browser: Any, tmp_path: Path, serve: Callable[..., Server]
) -> None:
    """#session=nope says so; editing the hash opens that session; a click names it in the URL."""
    _served(browser, tmp_path, serve, "one", "two", url="#session=nope")
    note = wait_for(browser, "document.getElementById('where').dataset.missing")
    assert note == "nope"
    assert 'no session "nope" in this store' in browser.execute_script(
        "return document.getElementById('where').textContent"
    )
    assert browser.execute_script("return document.body.dataset.loaded") == "two"
    browser.execute_script("location.hash = 'session=one'")
    wait_for(browser, "document.body.dataset.loaded === 'one'")
    assert not browser.execute_script("return document.getElementById('where').dataset.missing")
    browser.find_element("css selector", 'tr[data-session="two"]').click()
    wait_for(browser, "document.body.dataset.loaded === 'two'")
    assert browser.execute_script("return location.hash") == "#session=two"
    assert _errors(browser) == [], "the page asked for something the server does not have"


def test_a_session_another_writer_starts_appears_in_the_list(
    browser: Any, tmp_path: Path, serve: Callable[..., Server]
) -> None:
    """The sessions list is read again every few seconds, not only when the open one changes."""
    path = _served(browser, tmp_path, serve, "one")
    assert (
        browser.execute_script("return document.querySelectorAll('tr[data-session]').length") == 1
    )
    _session(path, "two")
    start = time.monotonic()
    wait_for(browser, "document.querySelector('tr[data-session=\"two\"]')", timeout=10)
    assert time.monotonic() - start < 8
    assert browser.execute_script("return document.body.dataset.loaded") == "one"


def test_the_cached_prefix_line_is_drawn_in_a_long_request(
    browser: Any, long_plain: tuple[str, str], serve: Callable[..., Server]
) -> None:
    """A request of more than 2,000 items lists its newest: the line is at the prefix's end."""
    path, session = long_plain
    store = open_store(path, read_only=True).unwrap()
    try:
        latest = Reader(store).session(session).unwrap().overview["latest"]["detail"]
    finally:
        store.close()
    assert latest["items_start"] > 0
    assert latest["items_start"] <= latest["prefix_end"] < latest["items_total"]
    server = serve(path)
    browser.get("about:blank")
    open_page(browser, server.url)
    found = wait_for(
        browser,
        f"document.querySelector('[data-items=\"{latest['index']}\"] [data-prefix-end]')",
    )
    assert int(found.get_attribute("data-prefix-end")) == latest["prefix_end"]
    after = browser.execute_script("return arguments[0].nextElementSibling.dataset.item", found)
    assert int(after) == latest["prefix_end"]


def test_the_request_shown_is_the_last_one_clicked(
    browser: Any, tmp_path: Path, serve: Callable[..., Server]
) -> None:
    """A click on an old request, then on the newest: the old one's late answer is dropped."""
    _served(browser, tmp_path, serve, "one")
    newest = browser.execute_script(
        "const rows = document.querySelectorAll('[data-view=timeline] [data-request]');"
        "rows[0].click(); rows[rows.length - 1].click(); return rows[rows.length - 1].dataset.request"
    )
    time.sleep(1.5)
    title = browser.execute_script(
        "return document.querySelector('[data-view=request] h2').textContent"
    )
    assert title.startswith(f"Request {newest} ")
    chosen = browser.execute_script(
        "return document.querySelector('[data-view=timeline] .chosen').dataset.request"
    )
    assert chosen == newest


def test_the_first_request_is_not_diffed_against_request_minus_one(
    browser: Any, tmp_path: Path, serve: Callable[..., Server]
) -> None:
    """Request 0 has no request before it: its heading says it is the first."""
    _served(browser, tmp_path, serve, "one")
    browser.execute_script("document.querySelector('[data-request=\"0\"]').click()")
    heading = wait_for(
        browser,
        "document.querySelector('[data-diff=\"0\"]')"
        " && document.querySelector('[data-view=request] h3').textContent",
    )
    assert heading.startswith("The first request ("), heading
    assert "-1" not in heading
