"""A hash-seed child is reported as hung by the CPU it used, never because the machine was busy.

The judge (`Watch`) is given the clock and the looks at the child, so these tests need no
slow machine; two real children show the two ways to hang (a loop, a block) are still caught.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import pytest

from ctxrules.checker import hashseed
from ctxrules.checker.watch import Limits, Sample, Watch, sample
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.rules import Facts
from ctxrules.testing.ruler import CHECK_RULER

LIMITS = Limits(cpu_seconds=120, idle_seconds=60.0, wall_seconds=900.0)


def test_a_child_waiting_for_a_cpu_is_never_hung() -> None:
    """Load 30: a second of CPU in every 100 of the clock, runnable the rest: waited for."""
    watch = Watch(LIMITS, started=0.0)
    for step in range(1, 10_001):
        assert watch.hung(step * 1.0, Sample(step / 100, runnable=step % 100 != 0)) is None
    # Never runnable when looked at, but its CPU time still grows: working, slowly.
    slow = Watch(LIMITS, started=0.0)
    for step in range(1, 10_001):
        assert slow.hung(step * 1.0, Sample(step / 1000, runnable=False)) is None


def test_a_blocked_child_is_hung_after_the_idle_limit_and_not_before() -> None:
    """No CPU used and not waiting for one (a sleep, a lock) for `idle_seconds`."""
    watch = Watch(LIMITS, started=0.0)
    assert watch.hung(10.0, Sample(1.5, runnable=True)) is None
    assert watch.hung(70.0, Sample(1.5, runnable=False)) is None
    why = watch.hung(70.5, Sample(1.5, runnable=False))
    assert why is not None
    assert why.startswith("blocked: no CPU used for 60 s")


def test_a_child_past_its_cpu_seconds_is_hung() -> None:
    """A loop that never returns uses the CPU: stopped at `cpu_seconds`, however fast or slow."""
    watch = Watch(LIMITS, started=0.0)
    assert watch.hung(5_000.0, Sample(120.0, runnable=True)) is None
    assert watch.hung(5_001.0, Sample(120.5, runnable=True)) == "120 s of CPU without an answer"


def test_where_the_child_cannot_be_read_the_clock_is_the_limit() -> None:
    """No ``/proc``: the old rule, by the clock, with `wall_seconds`."""
    watch = Watch(LIMITS, started=100.0)
    assert watch.hung(1_000.0, None) is None
    assert watch.hung(1_000.5, None) == "no answer after 900 s"


def test_this_process_is_read_from_proc() -> None:
    """On Linux a look gives the CPU used so far and that it runs."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc")
    import os  # noqa: PLC0415

    looked = sample(os.getpid())
    assert looked is not None
    assert looked.runnable
    assert looked.cpu > 0


def test_a_sleeping_child_is_reported_as_hung() -> None:
    """A real process blocked for good: caught after `idle_seconds` without using a CPU."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc")
    command = [sys.executable, "-c", "import time; time.sleep(600)"]
    limits = Limits(idle_seconds=1.0, poll_seconds=0.1)
    why = hashseed._watched(command, {}, limits)
    assert isinstance(why, str)
    assert why.startswith("blocked: no CPU used for")


def test_a_child_reads_its_request_from_a_file_never_a_pipe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It never waits for the parent (which a busy machine may starve): idle means blocked."""
    commands: list[list[str]] = []

    def watched(command: list[str], _env: object, _limits: object) -> tuple[int, bytes, bytes]:
        commands.append(command)
        return 0, Path(command[-1]).read_bytes(), b""

    monkeypatch.setattr(hashseed, "_watched", watched)
    assert hashseed._run_children(b'["answer"]', (4, 5), Limits()) == [["answer"], ["answer"]]
    # One file for all the children, named on their command line.
    assert [c[-2:] for c in commands] == [["120", commands[0][-1]]] * 2
    assert not Path(commands[0][-1]).exists()  # removed once they are done


LOOPING = "def loop(**_params):\n    def rule(commit, facts):\n        while True:\n            pass\n    return rule\n"


def test_a_child_running_a_rule_that_never_returns_is_reported_as_hung(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child stops itself at its CPU seconds (the kernel's limit), and the check says so."""
    (tmp_path / "looping_rule_for_watch.py").write_text(LOOPING, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = tmp_path / "spec.toml"
    spec.write_text('[[rules]]\nuse = "looping_rule_for_watch:loop"\n', encoding="utf-8")
    before = ContextCommit("s").append_items([ContextItem("u0", "user", rendered="hi")])
    request = hashseed._request(
        str(spec), [(0, before, Facts(tokenizer=CHECK_RULER), before)], allow_imports=True
    )
    limits = Limits(cpu_seconds=1, idle_seconds=600.0, poll_seconds=0.1)
    found = hashseed._run_child(pickle.dumps({**request, "full": False}), 4, limits)
    assert found == "the child process with PYTHONHASHSEED=4 hung (1 s of CPU without an answer)"
