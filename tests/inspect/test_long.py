"""A long session costs what the page shows: reads counted, the history paged, the rows exact."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inspect_pages import Server, open_page, shot, wait_for

from ctxrules import Context
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.diff import ChangeKind, diff_commits
from ctxrules.commit.vector import CHUNK
from ctxrules.inspect.delta import delta
from ctxrules.inspect.layout import place
from ctxrules.inspect.read import Reader
from ctxrules.store import open_store
from ctxrules.testing.responses import openai_response

ROWS = 500


def test_a_long_session_reads_the_window_not_the_history(
    long_store: tuple[str, str], counted: dict[str, int]
) -> None:
    """Sessions list and overview of a 2,400-message session: nodes and items read are bounded."""
    store = open_store(long_store[0], read_only=True).unwrap()
    try:
        reader = Reader(store, history_rows=ROWS)
        assert reader.sessions().unwrap()[0]["nodes"] > 2_400
        overview = reader.session(long_store[1]).unwrap().overview
        history = overview["history"]
        assert len(history["nodes"]) == ROWS
        assert history["start"] == history["total"] - ROWS
        assert [r["added"] for r in overview["requests"][1:]] == [3, 3, 3]
        # The window and a few ends (title, model, first and last node), not 2,400 nodes;
        # the chunks the diffs and the newest request's 2,000 items touch, not 4 x 2,400 items.
        assert counted["nodes"] <= ROWS + 30
        assert counted["items"] <= 2_000 + 4 * CHUNK
        before = dict(counted)
        # A poll reads no node and no item.
        assert reader.version(long_store[1]).unwrap() == overview["version"]
        assert counted == before
        # Paging back reads the rows asked for.
        earlier = reader.history(long_store[1], history["start"]).unwrap()
        assert earlier["start"] == history["start"] - ROWS
        assert counted["nodes"] - before["nodes"] <= ROWS + 5
        assert counted["items"] == before["items"]
    finally:
        store.close()


def test_the_window_has_the_lanes_of_the_whole_history(long_store: tuple[str, str]) -> None:
    """A window's lanes group its nodes as the whole graph's layout does (the retry apart)."""
    store = open_store(long_store[0], read_only=True).unwrap()
    try:
        graph = store.load_graph(long_store[1]).unwrap()
        whole = {p.node_id: p.lane for p in place(graph)[0]}
        reader = Reader(store, history_rows=ROWS)
        history = reader.session(long_store[1]).unwrap().overview["history"]
    finally:
        store.close()
    ids = [n["id"] for n in history["nodes"]]
    assert ids == list(graph.order)[history["start"] :]
    lanes = {n["id"]: n["lane"] for n in history["nodes"]}
    pairs = [(a, b) for a in ids[::7] for b in ids[::11]]
    assert all((lanes[a] == lanes[b]) == (whole[a] == whole[b]) for a, b in pairs)
    assert history["lanes"] == 2  # the main line and the retry's


def _items(n: int, offset: int = 0) -> list[ContextItem]:
    return [ContextItem(f"n{i}", "tool", tokens=10 + i % 7) for i in range(offset, offset + n)]


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 3 * CHUNK + 9),
    st.data(),
)
def test_the_row_diff_equals_the_whole_diff(size: int, data: st.DataObject) -> None:
    """Invariant 3 as the rows count it: the chunk-wise diff equals `diff_commits` (tighten, fold, add)."""
    before = ContextCommit("s").append_items(_items(size))
    tighten = data.draw(st.sets(st.integers(0, size - 1), max_size=5))
    fold = data.draw(st.integers(0, size))  # the first ``fold`` items summarized
    changes = {
        i: ContextItem(
            f"n{i}", "tool", State.AGED, rendered="[stub]", tokens=1, reason="tail_window"
        )
        for i in tighten
    }
    changes.update(
        {i: ContextItem(f"n{i}", "tool", State.SUMMARIZED, reason="compacted") for i in range(fold)}
    )
    after = before.replace_items(changes)
    if fold and data.draw(st.booleans()):
        summary = ContextItem("sm_1", "assistant", State.SUMMARY, tokens=5, reason="compacted")
        items = list(after.items)
        items.insert(fold, summary)
        after = ContextCommit("s").with_items(items)
    after = after.append_items(_items(data.draw(st.integers(0, 70)), offset=size))
    whole = diff_commits(before, after)
    row = delta(before, after, limit=10_000)
    kinds = {k: sum(c.kind is k for c in whole.changes) for k in ChangeKind}
    assert (row.prefix_end, row.prefix_tokens, row.removed) == (
        whole.prefix_end,
        whole.prefix_tokens,
        whole.removed,
    )
    assert (row.added, row.tightened, row.folded, row.rewritten) == (
        kinds[ChangeKind.ADDED],
        kinds[ChangeKind.TIGHTENED],
        kinds[ChangeKind.FOLDED],
        kinds[ChangeKind.REWRITTEN],
    )
    assert row.extends == whole.extends
    assert sorted(c.position for c in row.changes) == [c.position for c in whole.changes]


@pytest.fixture(scope="module")
def long_page(browser: Any, long_store: tuple[str, str]) -> Iterator[Any]:
    """The long session's page, served, open in the browser."""
    server = Server(long_store[0])
    try:
        open_page(browser, server.url)
        yield browser
    finally:
        server.stop()


def test_the_page_pages_back_through_a_long_history(
    long_page: Any, long_store: tuple[str, str]
) -> None:
    """The newest rows are drawn with the count of earlier ones; "earlier" draws the rows before."""
    store = open_store(long_store[0], read_only=True).unwrap()
    try:
        order = list(store.load_graph(long_store[1]).unwrap().order)
    finally:
        store.close()
    drawn = lambda: [  # noqa: E731
        n.get_attribute("data-id") for n in long_page.find_elements("css selector", "svg .node")
    ]
    newest = drawn()
    start = len(order) - len(newest)
    assert newest == order[start:]
    said = long_page.find_element("css selector", "[data-earlier]")
    assert int(said.get_attribute("data-earlier")) == start > 0
    long_page.find_element("css selector", '[data-page="earlier"]').click()
    wait_for(long_page, f"document.querySelector('[data-earlier]').dataset.earlier !== '{start}'")
    earlier = drawn()
    first = max(start - len(newest), 0)
    assert earlier == order[first:start]
    shot(long_page, "long-history", '[data-view="history"]')
    long_page.find_element("css selector", '[data-page="newest"]').click()
    wait_for(long_page, f"document.querySelector('[data-earlier]').dataset.earlier === '{start}'")
    assert drawn() == newest


def test_a_head_moved_off_the_newest_request_is_said(
    long_store: tuple[str, str], long_plain: tuple[str, str], long_page: Any
) -> None:
    """A retry 20 rows back has no request yet: the timeline is the branch it left, and says so."""
    for (path, session), moved in ((long_store, True), (long_plain, False)):
        store = open_store(path, read_only=True).unwrap()
        try:
            assert Reader(store).session(session).unwrap().overview["head_moved"] is moved
        finally:
            store.close()
    note = wait_for(long_page, "document.querySelector('[data-head-moved]')")
    assert "moved off the newest request's branch" in note.text


def test_a_head_ahead_of_the_newest_request_is_no_move(tmp_path: Path) -> None:
    """A message added after the newest request (the next one not built yet) moves no branch."""
    path = tmp_path / "s.sqlite"
    with Context(model="gpt-4o", window=16_000, store=str(path), session="s") as ctx:
        ctx.add({"role": "user", "content": "go"})
        ctx.openai()
        ctx.record(openai_response(0, "reading", [("c0", "read_file", {"path": "a.py"})]))
        ctx.add_tool_result("c0", "def a(): pass\n")
        ctx.add({"role": "user", "content": "and then?"})
    store = open_store(str(path), read_only=True).unwrap()
    try:
        overview = Reader(store).session("s").unwrap().overview
    finally:
        store.close()
    assert overview["history"]["heads"]["main"] != overview["requests"][-1]["head"]
    assert overview["head_moved"] is False
