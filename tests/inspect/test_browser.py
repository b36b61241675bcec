"""`ctxrules inspect` in a real headless Chromium: every view of a store made from a real session."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import pytest
from inspect_pages import Server, open_page, run_cli, shot, wait_for

from ctxrules.commit.diff import ChangeKind, diff_commits
from ctxrules.inspect.read import Reader
from ctxrules.rules.handles import item_handle
from ctxrules.store import open_store


@pytest.fixture(scope="module")
def page(browser: Any, real: tuple[str, str]) -> Any:
    """The page of the real store, served by ``ctxrules inspect``, open in the browser."""
    server = Server(real[0])
    try:
        open_page(browser, server.url)
        yield browser
    finally:
        server.stop()


@pytest.fixture(scope="module")
def stored(real: tuple[str, str]) -> Any:
    """The store's session as the inspector reads it (graph, requests), for the expectations."""
    store = open_store(real[0], read_only=True).unwrap()
    try:
        data = Reader(store).session(real[1]).unwrap()
        # The whole graph, read apart, to hold the page to.
        yield SimpleNamespace(
            info=data.info, requests=data.requests, graph_whole=store.load_graph(real[1]).unwrap()
        )
    finally:
        store.close()


def test_sessions_list(page: Any, stored: Any) -> None:
    """The list shows the session with its title, format, node and request counts, and cost."""
    rows = page.find_elements("css selector", "tr[data-session]")
    assert [r.get_attribute("data-session") for r in rows] == [stored.info.id]
    text = rows[0].text
    assert "claude-code" in text
    assert f" {len(stored.graph_whole.nodes)} " in f" {text} "
    assert "changelog" in text
    shot(page, "sessions", '[data-view="sessions"]')


def test_history_draws_every_node_and_the_retry_branch(page: Any, stored: Any) -> None:
    """One drawn node per DAG node; the retry sits in a lane of its own; the head is ringed."""
    drawn = page.find_elements("css selector", "svg .node")
    assert len(drawn) == len(stored.graph_whole.nodes)
    retry = page.find_elements("css selector", 'svg .node[data-kind="retry"]')
    assert len(retry) == 1
    original = stored.graph_whole.nodes[retry[0].get_attribute("data-id")].metadata["retry_of"]
    first = page.find_element("css selector", f'svg .node[data-id="{original}"]')
    assert retry[0].get_attribute("data-lane") != first.get_attribute("data-lane")
    head = page.find_element("css selector", "svg .head")
    assert head.get_attribute("data-head") == "main"
    kinds = {n.get_attribute("data-kind") for n in drawn}
    assert {"user", "assistant", "tool", "retry"} <= kinds
    shot(page, "history", '[data-view="history"]')


def test_a_node_clicked_is_shown_whole(page: Any, stored: Any) -> None:
    """Clicking a node shows its whole output, as text."""
    call = max(stored.graph_whole.nodes.values(), key=lambda c: len(str(c.output or "")))
    page.execute_script(
        "document.querySelector(`svg .node[data-id='${arguments[0]}']`)"
        ".dispatchEvent(new MouseEvent('click', {bubbles: true}))",
        call.id,
    )
    shown = wait_for(
        page,
        'document.querySelector(\'[data-view="node"] pre[data-text="output"]\')?.textContent',
    )
    assert shown == call.output
    shot(page, "node", '[data-view="node"]')


def _tightened(stored: Any) -> tuple[int, Any]:
    for request in stored.requests:
        for change in diff_commits(request.previous, request.commit).changes:
            if change.kind is ChangeKind.TIGHTENED:
                return request.index, change
    pytest.fail("the small-window replay tightened nothing")


def test_a_request_shows_its_items_and_its_diff(page: Any, stored: Any) -> None:
    """A request's diff shows the tightened item with its rule and handle; its items their states."""
    index, change = _tightened(stored)
    page.find_element("css selector", f'[data-request="{index}"]').click()
    wait_for(page, f"document.querySelector('[data-diff=\"{index}\"]')")
    rows = page.find_elements("css selector", f'[data-diff="{index}"] [data-change="tightened"]')
    row = next(r for r in rows if r.get_attribute("data-node") == change.item.source_node_id)
    rule = row.find_element("css selector", "[data-rule]").text
    handle = row.find_element("css selector", "[data-handle]").text
    assert rule == "age_tool_results"
    assert handle == item_handle(change.item)
    assert re.fullmatch(r"h:[a-z2-7]{8}", handle)
    items = page.find_elements("css selector", f'[data-items="{index}"] [data-item]')
    assert len(items) == len(stored.requests[index].commit.items)
    prefix = page.find_element("css selector", f'[data-items="{index}"] [data-prefix-end]')
    assert int(prefix.get_attribute("data-prefix-end")) == stored.requests[index].diff.prefix_end
    timeline = page.find_element("css selector", f'[data-request="{index}"]').text
    assert f"breaks at {stored.requests[index].diff.prefix_end}" in timeline
    assert "batch" in timeline
    shot(page, "timeline", '[data-view="timeline"]')
    shot(page, "request", '[data-view="request"]')


def test_occupancy_ring_and_panel_agree_with_show(page: Any, real: tuple[str, str]) -> None:
    """The panel's history equals `ctxrules show`'s newest commit to the token; ring and panel agree."""
    shown = run_cli("show", real[0], real[1], "--limit", "1")
    tokens = int(re.search(r"^\s+([\d,]+) tokens", shown, re.MULTILINE).group(1).replace(",", ""))
    history = page.find_element("css selector", "[data-panel] td[data-history]")
    assert int(history.get_attribute("data-history")) == tokens
    ring = int(page.find_element("css selector", "svg [data-used]").get_attribute("data-used"))
    total = int(
        page.find_element("css selector", "[data-panel] th[data-total]").get_attribute("data-total")
    )
    assert ring == total
    parts = page.find_elements("css selector", "[data-panel] td[data-part]")
    values = {p.get_attribute("data-part"): int(p.text.replace(",", "")) for p in parts}
    assert values["history"] + values["summary"] == tokens
    assert sum(values.values()) == 8_000  # the replay's window, recorded by the engine
    assert page.find_element("css selector", "[data-basis]").text in ("measured", "estimated")
    assert page.find_element("css selector", "[data-calibration]").text
    shot(page, "occupancy", '[data-view="occupancy"]')
    shot(page, "page")
