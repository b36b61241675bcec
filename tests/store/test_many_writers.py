"""Many processes appending to the same sessions: no node lost, no fork, conflicts retried.

Each worker (``appender.py``) appends with `append_at_head` on the head it last saw; a
stale head is a `HeadMoved` failure that the worker rebases and retries. At the end every
session must be one chain holding every worker's nodes exactly once.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from ctxrules.dag import Graph
from ctxrules.store import open_store

APPENDER = Path(__file__).with_name("appender.py")


@attrs.frozen
class Run:
    """What the workers reported: appends, conflicts retried, errors retried, appends/s."""

    appended: int
    conflicts: int
    retried_errors: int
    per_second: float


def run_workers(url: str, workers: int, count: int, sessions: int) -> Run:
    """Start ``workers`` appenders together and wait for them; what they reported."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(APPENDER), url, str(w), str(count), str(sessions)],
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
    outs = []
    for proc in procs:
        # Not communicate(): stdin is closed already and readline buffered part of stdout.
        assert proc.stdout is not None
        assert proc.stderr is not None
        outs.append((proc.stdout.read(), proc.stderr.read()))
        proc.wait(timeout=600)
        proc.stdout.close()
        proc.stderr.close()
    assert [p.returncode for p in procs] == [0] * workers, [err for _, err in outs]
    fields = [out.split() for out, _ in outs]
    slowest = max(float(f[3]) for f in fields)
    return Run(
        sum(int(f[0]) for f in fields),
        sum(int(f[1]) for f in fields),
        sum(int(f[2]) for f in fields),
        workers * count / slowest,
    )


def _chain(graph: Graph, head: str | None) -> list[str]:
    # Walk back from the head by predecessor: a session without forks is exactly this walk.
    walked = []
    while head is not None:
        walked.append(head)
        head = graph.nodes[head].predecessor
    return walked[::-1]


def check_history(url: str, workers: int, count: int, sessions: int) -> None:
    """Every session is one chain from its head, and together they hold every node once."""
    stored: list[str] = []
    with open_store(url).unwrap() as store:
        for k in range(sessions):
            graph = store.load_graph(f"s{k}").unwrap()
            chain = _chain(graph, store.get_head(f"s{k}").unwrap())
            assert chain == list(graph.order), f"s{k}: a node off the head's chain (a fork)"
            stored += chain
    expected = [f"w{w}n{i}" for w in range(workers) for i in range(count)]
    assert sorted(stored) == sorted(expected), "a node lost or stored twice"


def test_two_workers_on_two_sessions(fresh_store_url: Callable[[], str]) -> None:
    """Two processes, 60 appends each over two sessions: nothing lost, no fork."""
    url = fresh_store_url()
    run = run_workers(url, 2, 60, 2)
    assert run.appended == 120
    check_history(url, 2, 60, 2)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["postgresql"])
def test_eight_workers_on_four_sessions(fresh_store_url: Callable[[], str]) -> None:
    """Eight processes x 500 appends to four PostgreSQL sessions: 0 lost, 0 forks, all retried.

    SQLite's many-writer figures come from ``bench/store_throughput.py``; here the point is
    the server store, where workers on other machines would share one history.
    """
    url = fresh_store_url()
    run = run_workers(url, 8, 500, 4)
    assert run.appended == 4000
    check_history(url, 8, 500, 4)
    # With eight workers on four sessions, stale heads must have happened and been retried.
    assert run.conflicts > 0
    sys.stderr.write(f"8x500 on 4 sessions: {run}\n")
