"""Several processes driving `Context` on one stored session: refusals, never a fork.

The node was stored in one transaction and the head moved in a second, so the process
that lost the race got `StoreFailed` but left its node behind as a sibling branch (129
forks in 2 runs of 8 processes on PostgreSQL). A call's nodes and head move now go in one
transaction (`Store.write_turn`, the head by compare-and-set): a refused call stores
nothing, and the stored session stays one chain.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxrules.dag import Role
from ctxrules.engine.context import Context, Durability, StoreFailed
from ctxrules.store import open_store
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

RACER = Path(__file__).with_name("context_racer.py")


def _race(url: str, workers: int, turns: int) -> tuple[int, int]:
    procs = [
        subprocess.Popen(
            [sys.executable, str(RACER), url, str(w), str(turns)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    for proc in procs:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n", proc.stderr and proc.stderr.read()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.close()
    done = refused = 0
    for proc in procs:
        # Not communicate(): stdin is closed already and readline buffered part of stdout.
        assert proc.stdout is not None
        assert proc.stderr is not None
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.wait(timeout=600)
        proc.stdout.close()
        proc.stderr.close()
        assert proc.returncode == 0, err[-2000:]
        finished, lost = map(int, out.split())
        done, refused = done + finished, refused + lost
    return done, refused


def _forks(url: str) -> int:
    """Nodes beside another on the same predecessor (each a branch the head is not on)."""
    with open_store(url).unwrap() as store:
        graph = store.load_graph("race").unwrap()
    children: dict[str | None, int] = {}
    for node in graph.nodes.values():
        children[node.predecessor] = children.get(node.predecessor, 0) + 1
    return sum(count - 1 for count in children.values())


def _check(url: str, workers: int, turns: int) -> int:
    done, refused = _race(url, workers, turns)
    assert done == workers * turns
    assert _forks(url) == 0
    with open_store(url).unwrap() as store:
        graph = store.load_graph("race").unwrap()
    # Every recorded reply is stored once; a refused one is not (its turn was run again).
    assert sum(1 for n in graph.nodes.values() if n.role is Role.ASSISTANT) == workers * turns
    return refused


def _context(url: str, durability: Durability = "request") -> Context:
    return Context(
        model="gpt-4o",
        window=16_000,
        store=url,
        session="race",
        tokenizer=HeuristicCounter(),
        durability=durability,
    )


def test_the_loser_of_a_race_stores_nothing(store_url: str) -> None:
    """Two contexts on one session: the stale one is refused and leaves no sibling node."""
    first, second = _context(store_url), _context(store_url)
    try:
        first.add({"role": "user", "content": "from the first"})
        with pytest.raises(StoreFailed):
            second.add({"role": "user", "content": "from the second"})
        first.openai()
        first.record(openai_response(1, "reply", [], (100, 0)))
        with pytest.raises(StoreFailed):
            second.record(openai_response(1, "stale reply", [], (100, 0)))
    finally:
        first.close()
        second.close()
    assert _forks(store_url) == 0
    with open_store(store_url).unwrap() as store:
        graph = store.load_graph("race").unwrap()
    texts = [graph.nodes[i].output for i in graph.order]
    assert texts == ["from the first", "reply"]


def test_stored_per_turn_the_loser_of_a_race_stores_nothing(store_url: str) -> None:
    """The default durability: the stale object is refused at its request and leaves no sibling."""
    first, second = _context(store_url, "turn"), _context(store_url, "turn")
    first.add({"role": "user", "content": "from the first"})
    second.add({"role": "user", "content": "from the second"})
    first.openai()
    with pytest.raises(StoreFailed):
        second.openai()
    first.record(openai_response(1, "reply", [], (100, 0)))
    first.close()
    with pytest.raises(StoreFailed):
        second.close()  # what waits in it is refused again, never stored
    assert _forks(store_url) == 0
    with open_store(store_url).unwrap() as store:
        graph = store.load_graph("race").unwrap()
    assert [graph.nodes[i].output for i in graph.order] == ["from the first", "reply"]


@pytest.mark.slow
def test_eight_processes_on_one_session_never_fork(fresh_store_url: Callable[[], str]) -> None:
    """Eight processes, three turns each (the campaign's race): 0 forks, refusals happen."""
    assert _check(fresh_store_url(), 8, 3) > 0
