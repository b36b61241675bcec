"""kill -9 of a writer at random points, and two writers at once: no acknowledged write is lost.

The writer (``writer.py``) prints each seq only after ``append_node`` returned, so every
printed line is a write the store acknowledged; a line cut by the kill was not.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs
import pytest
from returns.result import Failure

from ctxrules.dag import Status
from ctxrules.store import UnknownSession, open_store

WRITER = Path(__file__).with_name("writer.py")

#: Seeds of the slow trials; every tenth kills during start-up (import, open, schema).
SLOW_SEEDS = range(60)
FAST_SEEDS = (101, 102, 103)


@attrs.frozen
class Acks:
    """What a writer acknowledged: node id by seq, and the nodes it completed."""

    seqs: dict[int, str]
    done: frozenset[str]


def _spawn(
    path: str, prefix: str, count: int, synchronous: str, *, wait_go: bool = False
) -> subprocess.Popen[str]:
    args = [sys.executable, str(WRITER), path, "s", prefix, str(count), synchronous]
    return subprocess.Popen(
        [*args, "--wait-go"] if wait_go else args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(writer: subprocess.Popen[str]) -> tuple[str, str]:
    # Not communicate(): it reads the pipe's descriptor and would skip what readline buffered.
    assert writer.stdout is not None
    assert writer.stderr is not None
    out, err = writer.stdout.read(), writer.stderr.read()
    writer.wait(timeout=120)
    writer.stdout.close()
    writer.stderr.close()
    return out, err


def _acks(lines: list[str]) -> Acks:
    # Only whole lines count: a line the kill cut short was never acknowledged.
    seqs: dict[int, str] = {}
    done: set[str] = set()
    for line in lines:
        if not line.endswith("\n") or line == "ready\n":
            continue
        first, node_id = line.split()
        if first == "done":
            done.add(node_id)
        else:
            seqs[int(first)] = node_id
    return Acks(seqs, frozenset(done))


def _kill_trial(path: str, seed: int) -> int:
    """One trial: kill the writer at a random moment, check the store; the writes acked."""
    rng = random.Random(seed)  # noqa: S311 - reproducible trials, not cryptography
    writer = _spawn(path, "n", 1_000_000, "FULL" if seed % 2 else "NORMAL")
    assert writer.stdout is not None
    ready = ""
    if seed % 10 == 0:
        time.sleep(rng.uniform(0.0, 0.4))
    else:
        ready = writer.stdout.readline()
        assert ready == "ready\n"
        # A PostgreSQL append is a round trip to a server: a wider window to land in.
        time.sleep(rng.uniform(0.0, 0.15 if not path.startswith("postgresql://") else 0.6))
    os.kill(writer.pid, signal.SIGKILL)
    out, _ = _finish(writer)
    assert writer.returncode == -signal.SIGKILL
    acks = _acks((ready + out).splitlines(keepends=True))

    with open_store(path).unwrap() as store:
        graph = store.load_graph("s")
    if isinstance(graph, Failure):
        # Killed before the session was created: fine, if nothing was acknowledged.
        assert (graph.failure(), acks.seqs) == (UnknownSession("s"), {})
        return 0
    loaded = graph.unwrap()
    for seq, node_id in acks.seqs.items():
        assert loaded.order[seq] == node_id, (seed, seq)
    for node_id in acks.done:
        assert loaded.nodes[node_id].status is Status.DONE, (seed, node_id)
    # What landed after the last ack is whole too: the writer's chain, in order, untorn.
    assert list(loaded.order) == [f"n{i}" for i in range(len(loaded))]
    if not path.startswith("postgresql://"):
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
    return len(acks.seqs)


def test_kill_9_loses_no_acknowledged_write(fresh_store_url: Callable[[], str]) -> None:
    """Three writers killed mid-append leave a store that opens with every acknowledged node."""
    acked = [_kill_trial(fresh_store_url(), seed) for seed in FAST_SEEDS]
    assert sum(acked) > 0, "the kills all landed before the first append; the test saw nothing"


@pytest.mark.slow
def test_kill_9_at_random_points_many_trials(
    backend: str, fresh_store_url: Callable[[], str]
) -> None:
    """Kills at random points, start-up included (SQLite: FULL and NORMAL sync), lose nothing.

    Sixty trials on SQLite, thirty on PostgreSQL (each trial there costs a fresh schema).
    """
    seeds = SLOW_SEEDS if backend == "sqlite" else SLOW_SEEDS[:30]
    urls = [fresh_store_url() for _ in seeds]
    # Three trials at a time: each mostly waits on its writer's start-up and its kill.
    with ThreadPoolExecutor(max_workers=3) as pool:
        acked = list(pool.map(_kill_trial, urls, seeds))
    assert len(acked) == len(seeds)
    assert sum(1 for n in acked if n > 0) >= len(seeds) * 2 // 3, acked


def test_two_concurrent_writers_lose_nothing(fresh_store_url: Callable[[], str]) -> None:
    """Two processes appending to one session get unique, dense seqs and keep every write."""
    path = fresh_store_url()
    # Each PostgreSQL write is a round trip to the server: fewer of them say the same.
    count = 300 if not path.startswith("postgresql://") else 120
    with open_store(path).unwrap() as store:
        store.create_session("s").unwrap()
    writers = [_spawn(path, prefix, count, "FULL", wait_go=True) for prefix in ("a", "b")]
    for writer in writers:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "ready\n"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.close()
    results = [_finish(writer) for writer in writers]
    assert [w.returncode for w in writers] == [0, 0], [err for _, err in results]
    acks = [_acks(out.splitlines(keepends=True)) for out, _ in results]

    with open_store(path).unwrap() as store:
        loaded = store.load_graph("s").unwrap()
    every = {**acks[0].seqs, **acks[1].seqs}
    assert len(acks[0].seqs) == len(acks[1].seqs) == count
    assert sorted(every) == list(range(2 * count)) == [loaded.nodes[i].seq for i in loaded.order]
    assert all(loaded.order[seq] == node_id for seq, node_id in every.items())
    assert all(loaded.nodes[n].status is Status.DONE for ack in acks for n in ack.done)
