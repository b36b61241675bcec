"""A turn-count point weighed and held back is shown as such: timeline, `ctxrules show`, telemetry.

At a 200k window a landing is weighed against what it makes the provider write again
(``min_gain_of_rewrite``); small old results before long user messages free too little,
so the points at turns 32 and 64 are held back. The expectations come from the commits'
batch marks, read apart from the code that shows them.
"""

from __future__ import annotations

from typing import Any

import pytest
from inspect_pages import Server, open_page, run_cli, wait_for

from ctxrules import Context
from ctxrules.cli.replay_report import request_json
from ctxrules.commit import ContextCommit
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.replay import replay
from ctxrules.inspect.read import Reader
from ctxrules.rules.batching import BATCH_COUNT, BATCH_TURN
from ctxrules.spec import load_spec
from ctxrules.spec.builtin import find_spec
from ctxrules.store import open_store
from ctxrules.telemetry.attributes import request_attributes
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

TURNS = 70


def _held_by_marks(before: ContextCommit | None, commit: ContextCommit) -> bool:
    if before is None:
        return False
    same_count = commit.marks.get(BATCH_COUNT) == before.marks.get(BATCH_COUNT)
    return same_count and commit.marks.get(BATCH_TURN) != before.marks.get(BATCH_TURN)


@pytest.fixture(scope="module")
def held_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[int], Any]:
    """A stored session whose requests 32 and 64 are held-back points; the spans' attributes."""
    path = str(tmp_path_factory.mktemp("held") / "store.sqlite")
    held: list[int] = []
    attributes: list[dict[str, Any]] = []
    with Context(
        model="gpt-4o",
        window=200_000,
        store=path,
        session="held",
        tokenizer=HeuristicCounter(),
        clock=lambda: 1_000.0,
    ) as ctx:
        before: ContextCommit | None = None
        for turn in range(TURNS):
            ctx.add({"role": "user", "content": f"step {turn}: " + "keep to the plan. " * 180})
            ctx.openai()
            prep = ctx.last
            assert prep is not None
            if _held_by_marks(before, prep.commit):
                held.append(turn)
            attributes.append(request_attributes(prep, before, "v")[0])
            before = prep.commit
            call = (f"c{turn}", "read_file", {"path": f"src/m{turn}.py"})
            reply = ctx.record(openai_response(turn, f"reading m{turn}", [call], (900, 0)))
            body = "\n".join(f"def f_{turn}_{i}(x): return x + {i}" for i in range(12))
            ctx.add_tool_result(reply.tool_calls[0].id, body)
    assert held == [32, 64]
    return path, held, attributes


def test_the_timeline_rows_say_which_points_were_held_back(
    held_store: tuple[str, list[int], Any],
) -> None:
    """The inspector's rows mark exactly the held-back requests, and those extend the one before."""
    path, held, _ = held_store
    store = open_store(path, read_only=True).unwrap()
    try:
        rows = Reader(store).session("held").unwrap().overview["requests"]
    finally:
        store.close()
    assert len(rows) == TURNS
    assert [r["index"] for r in rows if r["held"]] == held
    assert all(rows[i]["extends"] and rows[i]["batch"] is None for i in held)


def test_show_says_the_point_was_weighed_and_held_back(
    held_store: tuple[str, list[int], Any],
) -> None:
    """`ctxrules show`'s cache line of each held-back commit says why nothing landed."""
    out = run_cli("show", held_store[0], "held", "--limit", "0")
    lines = [line for line in out.splitlines() if line.strip().startswith("cache:")]
    marked = [line for line in lines if "weighed here and held back" in line]
    assert len(marked) == len(held_store[1])
    assert all("extends the request before it" in line for line in marked)


def test_a_spans_attributes_say_the_point_was_held_back(
    held_store: tuple[str, list[int], Any],
) -> None:
    """``ctxrules.batch.held`` is true on the held-back requests' spans, and only there."""
    _, held, attributes = held_store
    assert [i for i, found in enumerate(attributes) if found["ctxrules.batch.held"]] == held
    assert not any(attributes[i]["ctxrules.batch.point"] for i in held)


def test_the_page_marks_the_held_back_rows(
    browser: Any, held_store: tuple[str, list[int], Any]
) -> None:
    """In Chromium, the timeline shows a "held back" badge, with its reason, on those rows only."""
    server = Server(held_store[0])
    try:
        open_page(browser, server.url)
        wait_for(browser, "document.querySelector('[data-request]')")
        badges = browser.find_elements("css selector", "[data-held]")
        assert sorted(int(b.get_attribute("data-held")) for b in badges) == held_store[1]
        assert all(b.text == "held back" for b in badges)
        assert all("min_gain_of_rewrite" in (b.get_attribute("title") or "") for b in badges)
    finally:
        server.stop()


def test_a_replay_of_the_session_marks_the_same_requests(
    held_store: tuple[str, list[int], Any],
) -> None:
    """Replayed through the default spec, the recorded session's requests 32 and 64 are held back."""
    store = open_store(held_store[0], read_only=True).unwrap()
    try:
        recorded = store.load_session("held").unwrap()
    finally:
        store.close()
    pipeline = load_spec(find_spec("default").unwrap()).unwrap()
    engine = DefaultContextEngine(pipeline=pipeline, tokenizer=HeuristicCounter())
    requests = replay(recorded, engine, window=200_000)
    assert len(requests) == TURNS
    assert [r.index for r in requests if r.held] == held_store[1]
    assert all(requests[i].extends and requests[i].batch is None for i in held_store[1])
    assert all(request_json(r)["held"] is r.held for r in requests)
