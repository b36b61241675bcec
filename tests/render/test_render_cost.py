"""Counted work: a turn renders and converts only its new or changed items, at any size.

Rendering keeps each item's messages and its Chat Completions form with the item, so a
turn converts what the pipeline changed; everything else is copied. These tests count
the conversions (calls of `render_item` and of the adapter's per-item conversion), and
the items render visits, at 1k and 4k items: the counts must not grow with the history.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxrules.render.anthropic as anthropic_module
import ctxrules.render.openai as openai_module
import ctxrules.render.render as render_module
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.vector import CHUNK
from ctxrules.engine.turn import changed_since
from ctxrules.render import counted, render_commit, to_anthropic, to_openai
from ctxrules.render.item import render_item
from ctxrules.render.render import RenderedMessages, item_messages
from ctxrules.rules import Facts, Pipeline
from ctxrules.spec import load_spec
from ctxrules.testing.commits import commits
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
DEFAULT_SPEC = Path(__file__).resolve().parents[2] / "specs" / "default.toml"
#: Mutation runs (docs/mutation.md) run these tests once per mutant: there the histories are
#: half as long, still four times apart.
SMALL, LARGE = (500, 2_000) if settings.get_current_profile_name() == "mutation" else (1_000, 4_000)


def default_pipeline() -> Pipeline:
    """The pipeline of specs/default.toml."""
    return load_spec(DEFAULT_SPEC).unwrap()


def turn_items(turn: int, now: float) -> list[ContextItem]:
    """One turn: a user message, an assistant reply and a tool call with a long result."""
    raw = [
        ContextItem(f"u{turn}", "user", rendered=f"step {turn}", turn=turn, created_at=now),
        ContextItem(f"a{turn}", "assistant", rendered=f"doing {turn}", turn=turn, created_at=now),
        ContextItem(
            f"t{turn}",
            "tool",
            rendered=f"row {turn:04d} " * 240,  # one size at every turn, under the cap
            tool_name="grep",
            tool_call_id=f"c{turn}",
            arguments="{}",
            turn=turn,
            created_at=now,
        ),
    ]
    return [counted(item, RULER) for item in raw]


def grow(pipeline: Pipeline, size: int) -> tuple[ContextCommit, int, float]:
    """Run the pipeline turn by turn (30 s apart) until the commit holds ``size`` items."""
    commit, turn, now = ContextCommit("s"), 0, 0.0
    while len(commit.items) < size:
        commit = _next_turn(commit, pipeline, turn, now)
        turn += 1
        now += 30.0
    return commit, turn, now


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """Count the calls of ``module.name`` from now on."""
    calls = [0]
    original: Callable[..., Any] = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def _next_turn(commit: ContextCommit, pipeline: Pipeline, turn: int, now: float) -> ContextCommit:
    """One more turn on ``commit``, as generation runs it: appended, then the pipeline."""
    grown = commit.begin_generation().append_items(turn_items(turn, now))
    return pipeline.run(grown, Facts(now=now, head_turn=turn + 1, tokenizer=RULER))


def _turn_work(size: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int, int, int]:
    """Items changed, items rendered, items converted and messages sent in one turn."""
    pipeline = default_pipeline()
    parent, turn, now = grow(pipeline, size)
    to_openai(render_commit(parent))  # the previous turn's request: every item converted once
    child = _next_turn(parent, pipeline, turn, now)
    rendered = _counting(monkeypatch, render_module, "render_item")
    converted = _counting(monkeypatch, openai_module, "_parts")
    sent = to_openai(render_commit(child))
    counts = rendered[0], converted[0]
    # Joined by runs of kept items, the request is what message-by-message conversion gives.
    assert sent == to_openai(tuple(render_commit(child)))
    assert child.replaced is not None
    new = len(child.items) - len(parent.items)
    return new + len(set(child.replaced)), *counts, len(sent)


def test_a_turn_converts_only_what_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """One turn at 4k items converts as many items as at 1k: the new and tightened ones."""
    small = _turn_work(SMALL, monkeypatch)
    monkeypatch.undo()
    large = _turn_work(LARGE, monkeypatch)
    for changed, rendered, converted, _ in (small, large):
        assert 3 <= changed <= 6  # the 3 new items and what the pipeline tightened
        # New and tightened items were rendered when counted, so render reuses even those.
        assert rendered == 0
        assert converted <= changed
    assert small[:3] == large[:3]
    assert large[3] > 3 * small[3]  # and yet the whole history is sent


def test_the_count_would_see_a_full_conversion(monkeypatch: pytest.MonkeyPatch) -> None:
    """The counter is able to fail: a plain tuple of messages is converted message by message."""
    pipeline = default_pipeline()
    commit, _, _ = grow(pipeline, SMALL)
    messages = tuple(render_commit(commit))
    plain = _counting(monkeypatch, openai_module, "_convert")
    converted = _counting(monkeypatch, openai_module, "_parts")
    fresh = [attrs.evolve(item) for item in commit.items]  # equal items without their memo
    rendered = _counting(monkeypatch, render_module, "render_item")
    assert to_openai(messages) == to_openai(render_commit(commit.with_items(fresh)))
    assert plain[0] >= 1  # the plain tuple, message by message
    assert converted[0] == len(fresh)  # then each fresh item
    assert rendered[0] == len(fresh)


def test_render_visits_only_the_visible_items() -> None:
    """After a summary folds 9,990 of 10,000 items, render visits the 11 that are sent."""
    items = [
        ContextItem(f"n{i}", "user" if i % 2 == 0 else "assistant", rendered=f"m{i}", tokens=3)
        for i in range(10_000)
    ]
    folded = [
        attrs.evolve(item, state=State.SUMMARIZED) if 5 <= i < 9_995 else item
        for i, item in enumerate(items)
    ]
    summary = ContextItem("sm_1", "assistant", state=State.SUMMARY, rendered="so far", tokens=5)
    commit = ContextCommit("s").with_items([*folded[:5], summary, *folded[5:]])
    rendered = render_commit(commit)
    assert commit.hidden == ((6, 9_996),)
    assert len(rendered.items) == 11
    assert commit.items[commit.summary_at].source_node_id == "sm_1"


@given(commits())
def test_invariant_8_converting_by_item_equals_by_message(commit: ContextCommit) -> None:
    """Invariant 8: converting the rendered items once each gives what message-by-message does."""
    rendered = render_commit(commit)
    assert to_openai(rendered) == to_openai(tuple(rendered))
    assert to_openai(rendered) == to_openai(rendered)  # and again, from what items keep


@given(commits(), st.booleans(), st.data())
def test_invariant_8_anthropic_by_item_equals_by_message(
    commit: ContextCommit, newest: bool, data: st.DataObject
) -> None:
    """Invariant 8 for `to_anthropic`, with cache breakpoints anywhere in the request."""
    rendered = render_commit(commit)
    end = data.draw(st.none() | st.integers(0, len(rendered) - 1)) if rendered else None
    expected = to_anthropic(tuple(rendered), cache_prefix_end=end, cache_newest=newest)
    assert to_anthropic(rendered, cache_prefix_end=end, cache_newest=newest) == expected
    again = to_anthropic(rendered, cache_prefix_end=end, cache_newest=newest)
    assert again == expected  # from what items keep; and the kept blocks were not marked
    assert to_anthropic(rendered) == to_anthropic(tuple(rendered))


def test_anthropic_turn_converts_only_what_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """One turn at 1k and at 4k items converts the same few items for `to_anthropic`."""
    pipeline = default_pipeline()
    counts = []
    for size in (SMALL, LARGE):
        parent, turn, now = grow(pipeline, size)
        to_anthropic(render_commit(parent))
        child = _next_turn(parent, pipeline, turn, now)
        converted = _counting(monkeypatch, anthropic_module, "_parts")
        whole = _counting(monkeypatch, anthropic_module, "_gather")
        sent = to_anthropic(render_commit(child))
        monkeypatch.undo()
        assert child.replaced is not None
        changed = len(child.items) - len(parent.items) + len(set(child.replaced))
        assert whole[0] == 0  # never message by message
        assert converted[0] <= changed <= 6
        counts.append((converted[0], len(sent.messages)))
    assert counts[0][0] == counts[1][0]
    assert counts[1][1] > 3 * counts[0][1]  # and yet the whole history is sent


@given(commits(), st.data())
def test_spans_kept_in_step_with_the_items(commit: ContextCommit, data: st.DataObject) -> None:
    """The summarized spans and summary position kept per change equal a rebuild from scratch."""
    if not commit.items:
        return
    positions = data.draw(st.sets(st.integers(0, len(commit.items) - 1), max_size=5))
    states = data.draw(st.lists(st.sampled_from(State), min_size=5, max_size=5))
    changes = {
        p: attrs.evolve(commit.items[p], state=state)
        for p, state in zip(sorted(positions), states, strict=False)
    }
    changed = commit.append_items([commit.items[0]]).replace_items(changes)
    rebuilt = ContextCommit("s").with_items(changed.items)
    assert changed.hidden == rebuilt.hidden
    assert changed.summary_at == rebuilt.summary_at


def test_changes_read_from_the_commit_equal_a_full_comparison() -> None:
    """The engine's change counts from ``replaced`` equal comparing every item with the parent."""
    pipeline = default_pipeline()
    parent, turn, now = grow(pipeline, 300)
    child = _next_turn(parent, pipeline, turn, now)
    unknown = attrs.evolve(child, replaced=None)
    assert sum(changed_since(parent, child).values()) == 1
    assert changed_since(parent, child) == changed_since(parent, unknown)


@given(
    st.lists(
        st.sampled_from(["user", "assistant", "tool", "empty", "repeat"]), min_size=60, max_size=200
    )
)
def test_invariant_8_across_runs_of_kept_items(kinds: list[str]) -> None:
    """Invariant 8 over more items than one run: merges across run ends and a repeated id."""
    items = []
    for n, kind in enumerate(kinds):
        if kind in {"tool", "repeat"}:
            call = "c0" if kind == "repeat" else f"c{n}"
            items.append(
                ContextItem(f"n{n}", "tool", rendered=f"r{n}", tool_name="ls", tool_call_id=call)
            )
        else:
            role = "assistant" if kind == "empty" else kind
            items.append(ContextItem(f"n{n}", role, rendered="" if kind == "empty" else f"t{n}"))
    commit = ContextCommit("s").append_items(items)
    rendered = render_commit(commit)
    assert to_openai(rendered) == to_openai(tuple(rendered))
    grown = commit.append_items([ContextItem("late", "assistant", rendered="more")])
    again = render_commit(grown)  # the same items: every run but the last is kept
    assert to_openai(again) == to_openai(tuple(again))


@given(
    size=st.integers(0, 300),
    folds=st.lists(st.tuples(st.integers(0, 300), st.integers(1, 150)), max_size=3),
    changed=st.lists(st.integers(0, 299), max_size=4),
)
def test_invariant_8_whole_chunks_render_as_their_items(
    size: int, folds: list[tuple[int, int]], changed: list[int]
) -> None:
    """Invariant 8: rendering whole 64-item chunks from their kept runs equals rendering item by item, before and after a change."""
    summarized = {p for start, length in folds for p in range(start, min(start + length, size))}
    items = [
        ContextItem(
            f"n{i}",
            "user" if i % 2 == 0 else "assistant",
            rendered=f"m{i}",
            state=State.SUMMARIZED if i in summarized else State.FULL,
        )
        for i in range(size)
    ]
    commit = ContextCommit("s").with_items(items)

    def by_item(c: ContextCommit) -> list[object]:
        return [m for i in c.items if i.state is not State.SUMMARIZED for m in render_item(i)]

    assert list(render_commit(commit)) == by_item(commit)
    assert list(render_commit(commit)) == by_item(commit)  # again, from the kept runs
    edits = {p: attrs.evolve(items[p], rendered=f"edited {p}") for p in changed if p < size}
    edited = commit.replace_items(edits) if edits else commit
    assert list(render_commit(edited)) == by_item(edited)


def test_anthropic_turn_gathers_only_the_chunks_that_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A turn's `to_anthropic` visits the 64-item chunks its new and changed items are in.

    The same few chunks at 1k and at 4k items; the other chunks' turns are kept with them.
    """
    pipeline = default_pipeline()
    for size in (SMALL, LARGE):
        parent, turn, now = grow(pipeline, size)
        to_anthropic(render_commit(parent), cache_system=True, cache_newest=True)
        child = _next_turn(parent, pipeline, turn, now)
        visited = _counting(monkeypatch, anthropic_module, "_kept_parts")
        gathered = _counting(monkeypatch, anthropic_module, "_piece")
        built = _counting(monkeypatch, anthropic_module, "_kept_block")
        rendered = render_commit(child)
        sent = to_anthropic(rendered, cache_prefix_end=len(rendered) - 1)
        monkeypatch.undo()
        assert child.replaced is not None
        new = range(len(parent.items), len(child.items))
        touched = {position // CHUNK for position in (*child.replaced, *new)}
        assert 1 <= gathered[0] <= len(touched)
        assert len(new) <= visited[0] <= CHUNK * len(touched) < size // 3
        changed = [child.items[position] for position in {*child.replaced, *new}]
        # Blocks are converted for the new and changed items only, each once.
        assert 0 < built[0] <= sum(len(m.blocks) for i in changed for m in item_messages(i))
        whole = RenderedMessages(rendered, items=rendered.items)  # item by item, as before
        assert sent == to_anthropic(whole, cache_prefix_end=len(rendered) - 1)


def test_the_chunk_count_would_see_a_whole_rebuild(monkeypatch: pytest.MonkeyPatch) -> None:
    """The counter is able to fail: items not kept in chunks are visited, every one."""
    pipeline = default_pipeline()
    commit, _, _ = grow(pipeline, SMALL)
    rendered = render_commit(commit)
    to_anthropic(rendered)
    visited = _counting(monkeypatch, anthropic_module, "_kept_parts")
    to_anthropic(RenderedMessages(rendered, items=rendered.items))
    assert visited[0] == len(rendered.items)
