"""A session kept in a store survives its process: the next request is byte-identical."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from ctxrules.commit import State
from ctxrules.store import open_store
from tests.module_files import load_file

AGENT = Path(__file__).with_name("restart_agent.py")
TURNS = 16


def _agent(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, str(AGENT), *args], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.splitlines()


def _module() -> ModuleType:
    return load_file("restart_agent", AGENT)


def _killed_when_ready(mode: str, store: Path, turns: int) -> None:
    """Run the agent in ``mode`` for ``turns`` turns, then SIGKILL it: no cleanup, as a crash."""
    running = subprocess.Popen(
        [sys.executable, str(AGENT), mode, str(store), str(turns)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert running.stdout is not None
        assert running.stdout.readline() == "ready\n"
    finally:
        running.kill()
        running.wait(timeout=30)


def test_a_killed_process_is_continued_with_the_request_it_would_have_sent(tmp_path: Path) -> None:
    """Kill the agent between turns; a new process on the same store sends the same request."""
    store = tmp_path / "agent.sqlite"
    _killed_when_ready("run", store, TURNS)
    (continued,) = _agent("next", str(store), str(TURNS))
    agent, clock = _module(), [0.0]
    uninterrupted = agent._context(None, clock)
    paths = agent.turns(uninterrupted, clock, TURNS)
    reference = agent.next_request(uninterrupted, clock, TURNS)
    assert any("compact:finished" in path for path in paths), (
        "the run compacted, so the restored state carries a summary and aged items"
    )
    assert continued == reference
    request = json.loads(continued)
    assert request["messages"][0] == {
        "role": "system",
        "content": "You are a careful coding agent.",
    }


BACKGROUND_TURNS = 11


def test_a_process_killed_after_a_request_stored_per_turn_sends_that_request_again(
    tmp_path: Path,
) -> None:
    """The default durability: kill -9 after turn N's request; a new process builds it again, byte for byte."""
    store = tmp_path / "agent.sqlite"
    _killed_when_ready("run-turn", store, TURNS)
    (continued,) = _agent("next-turn", str(store), str(TURNS))
    agent, clock = _module(), [0.0]
    uninterrupted = agent._context(None, clock)
    agent.turns(uninterrupted, clock, TURNS)
    reference = agent.next_request(uninterrupted, clock, TURNS)
    assert continued == reference


def test_a_process_killed_during_a_background_summary_leaves_no_trace_of_it(
    tmp_path: Path,
) -> None:
    """Kill -9 during a background summary: nothing of it is stored; the next request is the same.

    The same as an uninterrupted run sends while that summary has not landed.
    """
    store = tmp_path / "agent.sqlite"
    _killed_when_ready("run-bg", store, BACKGROUND_TURNS)
    opened = open_store(str(store)).unwrap()
    try:
        last = opened.last_commit("restart-demo").unwrap()
    finally:
        opened.close()
    assert last is not None
    assert not any(item.state in (State.SUMMARY, State.SUMMARIZED) for item in last.items)
    (continued,) = _agent("next-bg", str(store), str(BACKGROUND_TURNS))
    agent, clock = _module(), [0.0]
    uninterrupted = agent._context(None, clock, background=True)
    paths = agent.turns(uninterrupted, clock, BACKGROUND_TURNS)
    reference = agent.next_request(uninterrupted, clock, BACKGROUND_TURNS)
    uninterrupted.close()
    assert any("summary:started" in path for path in paths)
    assert not any("summary:applied" in path for path in paths)
    assert continued == reference
