"""Invariant 8 (pure rendering): same commit, equal messages; no clock, I/O, randomness or globals."""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given

from ctxrules.commit import ContextCommit, ContextItem, commit_from_json, commit_to_json
from ctxrules.render import counted, render_commit
from ctxrules.testing import commits
from ctxrules.tokens import HeuristicCounter

_WATCH = {"active": False, "events": []}


def _audit(event: str, _args: Any) -> None:
    # Audit hooks cannot be removed, so this one only records while a test switches it on.
    if _WATCH["active"] and not event.startswith(("object.", "sys._getframe", "code.__new__")):
        _WATCH["events"].append(event)


sys.addaudithook(_audit)


@contextmanager
def watched() -> Iterator[list[str]]:
    """Record every audited effect (open, socket, subprocess, env, ...) inside the block."""
    _WATCH["events"] = []
    _WATCH["active"] = True
    try:
        yield _WATCH["events"]
    finally:
        _WATCH["active"] = False


@pytest.fixture
def no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the clock and randomness raise for the rest of the test."""

    def forbidden(*_: object, **__: object) -> None:
        raise AssertionError("rendering read the clock or randomness")

    for name in ("time", "monotonic", "perf_counter", "time_ns"):
        monkeypatch.setattr(time, name, forbidden)
    for name in ("random", "randint", "choice", "shuffle"):
        monkeypatch.setattr(random, name, forbidden)


@given(commits())
def test_invariant_8_render_twice_is_equal(commit: ContextCommit) -> None:
    """Invariant 8: rendering the same commit twice gives equal messages."""
    assert render_commit(commit) == render_commit(commit)


@given(commits())
def test_invariant_8_commit_rebuilt_from_json_renders_equal(commit: ContextCommit) -> None:
    """Invariant 8: an equal commit rebuilt from JSON has the same id and renders equal."""
    rebuilt = commit_from_json(commit_to_json(commit)).unwrap()
    assert rebuilt == commit
    assert rebuilt.id == commit.id
    assert render_commit(rebuilt) == render_commit(commit)


@pytest.mark.usefixtures("no_clock")
def test_invariant_8_render_reads_no_clock_io_or_randomness() -> None:
    """Invariant 8: render_commit runs with the clock and randomness booby-trapped and audits nothing."""
    commit = _fixed_commit()
    with watched() as effects:
        first = render_commit(commit)
        second = render_commit(commit)
    assert first == second
    assert len(first) == 6
    assert effects == []


@pytest.mark.usefixtures("no_clock")
def test_the_effect_watch_can_fail() -> None:
    """The watch is able to fail: opening a file while watching is recorded, reading the clock raises."""
    with watched() as effects, open(__file__, encoding="utf-8"):  # noqa: PTH123 - the builtin is audited
        pass
    assert "open" in effects
    with pytest.raises(AssertionError):
        time.time()


def _fixed_commit() -> ContextCommit:
    ruler = HeuristicCounter()
    items = [
        ContextItem("n1", "user", rendered="List src/"),
        ContextItem("n2", "assistant", rendered="Looking."),
        ContextItem(
            "n3",
            "tool",
            rendered="main.py",
            tool_name="ls",
            tool_call_id="c1",
            arguments='{"p":"src"}',
        ),
        ContextItem("sm_1", "assistant", state="summary", rendered="Earlier: setup."),
        ContextItem("n4", "tool", state="cleared", rendered="[cleared]", tool_name="grep"),
    ]
    return ContextCommit("s").with_items(counted(i, ruler) for i in items)
