"""`ctxrules inspect --export`: one file with every view, opened from disk with nothing fetched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_pages import open_page, run_cli, shot, wait_for

from ctxrules.commit.diff import ChangeKind, diff_commits
from ctxrules.inspect.read import Reader
from ctxrules.rules.handles import item_handle
from ctxrules.store import open_store


def test_the_export_shows_every_view_offline(
    browser: Any, real: tuple[str, str], tmp_path: Path
) -> None:
    """The exported file draws the session, its DAG, a request's diff and the occupancy, fetching nothing."""
    target = tmp_path / "session.html"
    said = run_cli("inspect", real[0], "--export", str(target))
    assert f"exported session {real[1]}" in said
    store = open_store(real[0], read_only=True).unwrap()
    try:
        data = Reader(store).session(real[1]).unwrap()
        graph = store.load_graph(real[1]).unwrap()
    finally:
        store.close()
    html = target.read_text("utf-8")
    assert 'http-equiv="Content-Security-Policy"' in html
    assert "connect-src" not in html  # default-src 'none' forbids every fetch
    open_page(browser, target.as_uri())
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    rows = browser.find_elements("css selector", "tr[data-session]")
    assert [r.get_attribute("data-session") for r in rows] == [real[1]]
    assert len(browser.find_elements("css selector", "svg .node")) == len(graph.nodes)
    index, change = next(
        (r.index, c)
        for r in data.requests
        for c in diff_commits(r.previous, r.commit).changes
        if c.kind is ChangeKind.TIGHTENED
    )
    browser.find_element("css selector", f'[data-request="{index}"]').click()
    wait_for(
        browser,
        f'document.querySelector(\'[data-diff="{index}"] [data-change="tightened"]\')',
    )
    handles = [
        e.text
        for e in browser.find_elements(
            "css selector",
            f'[data-diff="{index}"] [data-change="tightened"] [data-handle]',
        )
    ]
    assert item_handle(change.item) in handles
    history = browser.find_element("css selector", "[data-panel] td[data-history]")
    assert int(history.get_attribute("data-history")) == data.requests[-1].commit.total_tokens
    assert browser.find_element("id", "live").text == "exported"
    shot(browser, "export")
