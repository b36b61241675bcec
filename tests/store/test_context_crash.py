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
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ctxrules.dag import Graph, Role, Status, ancestors
from ctxrules.engine.context import Context, Durability
from ctxrules.store import open_store

WRITER = Path(__file__).with_name("context_writer.py")
sys.path.insert(0, str(WRITER.parent))
from context_writer import loop_context, steps  # noqa: E402 - the loop's own steps, beside it


def _acks(out: str) -> list[tuple[str, int, str]]:
    # A line the kill cut short was never acknowledged.
    acks = []
    for line in out.splitlines(keepends=True):
        parts = line.split()
        if line.endswith("\n") and len(parts) == 4 and parts[0] == "ack":
            acks.append((parts[1], int(parts[2]), parts[3]))
    return acks


def _kill_trial(url: str, seed: int, durability: Durability = "request") -> int:
    """One trial: the loop killed after a random time; the store checked; the acks counted."""
    rng = random.Random(seed)  # noqa: S311 - reproducible trials, not cryptography
    tag = f"crash-{uuid.uuid4().hex[:12]}"
    writer_url = f"{url}&application_name={tag}" if url.startswith("postgresql://") else url
    loop = subprocess.Popen(
        [sys.executable, str(WRITER), writer_url, durability],
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
    if writer_url != url:
        _until_the_server_lets_go(url, tag)
    _kind, nodes, head = acks[-1]

    with open_store(url).unwrap() as store:
        session = store.load_session("crash").unwrap()
        last = store.last_commit("crash").unwrap()
    graph = session.graph
    assert len(graph) >= nodes, (seed, len(graph), nodes)
    assert session.head is not None
    assert head in {n.id for n in ancestors(graph, session.head)}, (seed, head)
    for node in graph.nodes.values():
        if node.role is Role.ASSISTANT:
            # A reply is stored with its tool call, never without it (an answer has none).
            calls = 0 if str(node.output).startswith("Done:") else 1
            assert len(graph.callees_of(node.id)) == calls, (seed, node.id)

    clock = [10_000.0]
    ctx = loop_context(url, clock)
    replica = _replica(graph, last.head_node_id if last is not None else None)
    try:
        for context in (ctx, replica):
            running = [context.session.graph.nodes[i] for i in context.session.running]
            assert all(n.status is Status.RUNNING for n in running)
            for node in running:
                context.add_tool_result(str(node.metadata["tool_call_id"]), "late result")
            context.add({"role": "user", "content": "go on"})
        # The next request is the one the uninterrupted loop would have sent.
        assert ctx.openai() == replica.openai(), seed
    finally:
        ctx.close()
    return len(acks)


def _until_the_server_lets_go(url: str, tag: str) -> None:
    """Wait until the killed writer's server backend has ended.

    A COMMIT the writer sent just before the kill still completes on the server (it was
    never acknowledged); until the backend ends, a read may see the store before it and a
    later read after it, so the checks and the replica would each see another state.
    """
    import psycopg  # noqa: PLC0415 - only where PostgreSQL runs

    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(600):
            sql = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
            row = conn.execute(sql, (tag,)).fetchone()
            if row is not None and row[0] == 0:
                return
            time.sleep(0.05)
    raise AssertionError(f"the killed writer's backend {tag} is still there after 30 s")


def _replica(stored: Graph, prepared: str | None) -> Context:
    """The loop run again in memory up to the state the store holds, its clock then at 10,000.

    ``prepared`` is the head of the last stored commit: when it is the head the messages
    reached, the killed loop had made its request there too, and so does the replica.
    """
    clock = [1_000.0]
    replica = loop_context(None, clock)
    done = {i for i, n in stored.nodes.items() if n.status is not Status.RUNNING}
    loop = steps(replica, clock)
    for kind in loop:
        graph = replica.session.graph
        finished = {i for i, n in graph.nodes.items() if n.status is not Status.RUNNING}
        if set(graph.nodes) == set(stored.nodes) and finished == done:
            if kind == "user" and prepared == replica.session.head:
                next(loop)  # the request, which adds no node
            clock[0] = 10_000.0
            return replica
        assert len(graph) <= len(stored), "the store holds what the loop never wrote"
    raise AssertionError("unreachable: the loop runs forever")


def test_a_killed_agent_loop_loses_nothing(fresh_store_url: Callable[[], str]) -> None:
    """Two kills of a live loop: every acknowledged call is stored and the session goes on.

    One loop stores each call and syncs at each request, one syncs every call, one stores
    per turn (the default).
    """
    acked = [
        _kill_trial(fresh_store_url(), 7, "request"),
        _kill_trial(fresh_store_url(), 8, "every_call"),
        _kill_trial(fresh_store_url(), 9, "turn"),
    ]
    assert min(acked) > 0


@pytest.mark.slow
def test_forty_kills_of_a_live_loop_per_backend(fresh_store_url: Callable[[], str]) -> None:
    """Forty kills at random moments of a loop with tool outputs up to 60,000 characters."""
    seeds = range(40)
    urls = [fresh_store_url() for _ in seeds]
    with ThreadPoolExecutor(max_workers=2) as pool:
        acked = list(pool.map(_kill_trial, urls, seeds))
    assert len(acked) == 40
    assert sum(acked) > 40 * 4, acked


@pytest.mark.slow
def test_thirty_kills_of_a_loop_stored_per_turn(fresh_store_url: Callable[[], str]) -> None:
    """``durability="turn"``: each acknowledged request, with the turn before it, survives a kill."""
    seeds = range(100, 130)
    urls = [fresh_store_url() for _ in seeds]
    with ThreadPoolExecutor(max_workers=2) as pool:
        acked = list(pool.map(_kill_trial, urls, seeds, ["turn"] * len(urls)))
    assert len(acked) == 30
    assert sum(acked) > 30, acked
