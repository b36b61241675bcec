"""kill -9 of a `Context` agent loop mid-write: nothing acknowledged is lost, nothing is torn.

The loop (``context_writer.py``) acknowledges each call after it returned. After the kill
the store must open, hold every acknowledged node with the head at or past the last
acknowledged one, hold every stored reply with its tool call (never one without the
other), and let a new `Context` continue the session: the pending tool result is taken and
the next request is built.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ctxrules.dag import Role, Status, ancestors
from ctxrules.engine.context import Context
from ctxrules.store import open_store
from ctxrules.tokens import HeuristicCounter

WRITER = Path(__file__).with_name("context_writer.py")


def _acks(out: str) -> list[tuple[str, int, str]]:
    # A line the kill cut short was never acknowledged.
    acks = []
    for line in out.splitlines(keepends=True):
        parts = line.split()
        if line.endswith("\n") and len(parts) == 4 and parts[0] == "ack":
            acks.append((parts[1], int(parts[2]), parts[3]))
    return acks


def _kill_trial(url: str, seed: int) -> int:
    """One trial: the loop killed after a random time; the store checked; the acks counted."""
    rng = random.Random(seed)  # noqa: S311 - reproducible trials, not cryptography
    loop = subprocess.Popen(
        [sys.executable, str(WRITER), url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert loop.stdout is not None
    first = loop.stdout.readline()  # the first ack: the loop is writing
    time.sleep(rng.uniform(0.0, 1.5))
    os.kill(loop.pid, signal.SIGKILL)
    out, err = loop.communicate(timeout=60)
    assert loop.returncode == -signal.SIGKILL, err[-2000:]
    acks = _acks(first + out)
    assert acks, f"the loop wrote nothing before the kill: {err[-2000:]}"
    _kind, nodes, head = acks[-1]

    with open_store(url).unwrap() as store:
        session = store.load_session("crash").unwrap()
    graph = session.graph
    assert len(graph) >= nodes, (seed, len(graph), nodes)
    assert session.head is not None
    assert head in {n.id for n in ancestors(graph, session.head)}, (seed, head)
    for node in graph.nodes.values():
        if node.role is Role.ASSISTANT:
            # A reply is stored with its tool call, never without it.
            assert len(graph.callees_of(node.id)) == 1, (seed, node.id)

    ctx = Context(
        model="gpt-4o",
        window=16_000,
        store=url,
        session="crash",
        tokenizer=HeuristicCounter(),
        clock=lambda: 10_000.0,
    )
    try:
        running = [graph.nodes[i] for i in ctx.session.running]
        assert all(n.status is Status.RUNNING for n in running)
        for node in running:
            ctx.add_tool_result(str(node.metadata["tool_call_id"]), "late result")
        ctx.add({"role": "user", "content": "go on"})
        assert ctx.openai()["messages"]
    finally:
        ctx.close()
    return len(acks)


def test_a_killed_agent_loop_loses_nothing(fresh_store_url: Callable[[], str]) -> None:
    """Two kills of a live loop: every acknowledged call is stored and the session goes on."""
    acked = [_kill_trial(fresh_store_url(), seed) for seed in (7, 8)]
    assert min(acked) > 0


@pytest.mark.slow
def test_thirty_kills_of_a_live_loop_per_backend(fresh_store_url: Callable[[], str]) -> None:
    """Thirty kills at random moments of a loop with tool outputs up to 60,000 characters."""
    seeds = range(30)
    urls = [fresh_store_url() for _ in seeds]
    with ThreadPoolExecutor(max_workers=2) as pool:
        acked = list(pool.map(_kill_trial, urls, seeds))
    assert len(acked) == 30
    assert sum(acked) > 30 * 4, acked
