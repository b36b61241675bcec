"""Two `Context` objects on one stored session: the second writer is told, and reloads."""

from __future__ import annotations

from pathlib import Path

import pytest

import ctxrules
from ctxrules.testing.responses import openai_response


def _context(store: Path, durability: ctxrules.Durability = "request") -> ctxrules.Context:
    # Stored per call unless asked: each call that adds is where a stale object is told.
    return ctxrules.Context(
        model="gpt-4o", store=store, session="shared", clock=lambda: 0.0, durability=durability
    )


def _texts(request: dict[str, object]) -> list[object]:
    messages = request["messages"]
    assert isinstance(messages, list)
    return [m.get("content") for m in messages]


def test_the_writer_that_lost_the_race_gets_session_moved_and_reload_catches_up(
    tmp_path: Path,
) -> None:
    """A stale object raises SessionMoved (a StoreFailed) until reloaded, never overwrites."""
    store = tmp_path / "s.sqlite"
    first, second = _context(store), _context(store)
    first.add({"role": "user", "content": "from the first"})
    with pytest.raises(ctxrules.SessionMoved, match=r"reload\(\)") as caught:
        second.add({"role": "user", "content": "from the second"})
    assert isinstance(caught.value, ctxrules.StoreFailed), "old handlers still catch it"
    # Stuck until reloaded: the same stale head fails again rather than overwriting.
    with pytest.raises(ctxrules.SessionMoved):
        second.add({"role": "user", "content": "again, without reloading"})

    second.reload()
    second.add({"role": "user", "content": "from the second, after reload"})
    sent = _texts(second.openai())
    assert sent == ["from the first", "from the second, after reload"]
    # The first is now the stale one; a third object opened afterwards sees both messages.
    with pytest.raises(ctxrules.SessionMoved):
        first.record(openai_response(0, "done", []))
    assert _texts(_context(store).openai()) == sent


def test_stored_per_turn_the_loser_is_told_at_its_request_and_reload_catches_up(
    tmp_path: Path,
) -> None:
    """The default durability: the stale object's calls wait; its request raises SessionMoved."""
    store = tmp_path / "s.sqlite"
    first, second = _context(store, "turn"), _context(store, "turn")
    first.add({"role": "user", "content": "from the first"})
    second.add({"role": "user", "content": "from the second"})
    first.openai()
    with pytest.raises(ctxrules.SessionMoved, match=r"reload\(\)"):
        second.openai()
    with pytest.raises(ctxrules.SessionMoved):
        second.openai()  # stuck until reloaded, never overwriting
    second.reload()
    second.add({"role": "user", "content": "from the second, after reload"})
    sent = _texts(second.openai())
    assert sent == ["from the first", "from the second, after reload"]
    first.close()
    second.close()
    assert _texts(_context(store, "turn").openai()) == sent


def _a_stale_block_that_raises(store: Path, first: ctxrules.Context) -> None:
    with _context(store, "turn") as second:
        second.add({"role": "user", "content": "from the second"})
        first.openai()  # moves the session on: what waits in `second` is refused on leaving
        raise ValueError("the block's own error")


def test_a_block_that_raises_keeps_its_exception_when_what_waits_cannot_be_stored(
    tmp_path: Path,
) -> None:
    """Leaving a ``with`` block on an error: that error propagates; the refused store is a warning."""
    store = tmp_path / "s.sqlite"
    first = _context(store, "turn")
    first.add({"role": "user", "content": "from the first"})
    with pytest.warns(RuntimeWarning) as warned, pytest.raises(ValueError, match="block's own"):
        _a_stale_block_that_raises(store, first)
    assert "leaving the block" in str(warned[0].message)
    assert "moved on by another writer" in str(warned[0].message)
    first.close()


def test_reload_after_a_tool_call_keeps_the_stored_call_waiting(tmp_path: Path) -> None:
    """A reloaded object still knows which stored calls wait for their results."""
    store = tmp_path / "s.sqlite"
    ctx = _context(store)
    ctx.add({"role": "user", "content": "read it"})
    ctx.openai()
    ctx.record(openai_response(0, "", [("c1", "read_file", {"path": "a.py"})]))
    ctx.reload()
    ctx.add_tool_result("c1", "print('hi')")
    assert "print('hi')" in str(ctx.openai()["messages"])


def test_reload_without_a_store_changes_nothing() -> None:
    """Without a store there is nothing to read again."""
    ctx = ctxrules.Context(model="gpt-4o", clock=lambda: 0.0)
    ctx.add({"role": "user", "content": "hello"})
    ctx.reload()
    assert _texts(ctx.openai()) == ["hello"]
