"""Invariant 8's promise to users: `ctxrules check --seed S` gives the same report on any machine.

The search and the shrinking are bounded by work (examples, runs of the test), never by
the clock, so a process whose clock races (as a busy machine's does, against the work
done) reports what an idle one reports.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import strategies as st

from ctxrules.check import Violation
from ctxrules.checker import runner
from ctxrules.commit import ContextCommit
from ctxrules.rules import Facts

HERE = Path(__file__).resolve().parent

#: Run `ctxrules check` in a process whose clock, read by anyone, moves 10 s per reading
#: when the first argument is "slow": any limit in seconds is past at its first look.
_CHECK = """
import sys, time
if sys.argv[1] == "slow":
    now = [time.monotonic()]

    def later(*_args):
        now[0] += 10.0
        return now[0]

    for name in ("monotonic", "perf_counter", "time"):
        setattr(time, name, later)
sys.path.insert(0, sys.argv[2])
from ctxrules.cli.main import main

sys.exit(main(["check", *sys.argv[3:]]))
"""


def _check(clock: str, spec: Path) -> tuple[int, str]:
    args = [str(spec), "--allow-imports", "--seed", "5", "--examples", "60"]
    done = subprocess.run(
        [sys.executable, "-c", _CHECK, clock, str(HERE), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    return done.returncode, done.stdout


def test_the_same_seed_gives_the_same_report_on_a_racing_clock(tmp_path: Path) -> None:
    """Invariant 8: a clock 10 s ahead at each reading shrinks to the same counterexample.

    With shrinking bounded by 6 s of the clock, the racing process stopped shrinking at once
    and printed a larger counterexample than the idle one.
    """
    spec = tmp_path / "broken.toml"
    spec.write_text('[[rules]]\nuse = "broken_rules:grow_tokens"\n', encoding="utf-8")
    idle, racing = _check("idle", spec), _check("slow", spec)
    assert idle[0] == 1, idle
    assert "invariant 3" in idle[1]
    assert racing == idle


def test_the_engine_reads_the_work_clock_only_while_searching() -> None:
    """Shrinking is bounded by runs of the test; the engine gets its clock back afterwards."""
    from hypothesis.internal.conjecture import engine  # noqa: PLC0415

    seen: list[tuple[object, float]] = []

    def body(_data: st.DataObject) -> None:
        seen.append((engine.time, engine.MAX_SHRINKING_SECONDS))

    runner._search(body, 3, seed=1, shrink_calls=7)
    assert seen
    assert all(isinstance(clock, runner.WorkClock) and limit == 7 for clock, limit in seen)
    assert engine.time is time
    assert engine.MAX_SHRINKING_SECONDS == 300


def test_shrinking_stops_after_its_runs() -> None:
    """A failure is shrunk for the runs allowed, however long each takes: more runs, more work."""
    runs: list[int] = []

    class Failed(Exception):
        pass

    def body(data: st.DataObject) -> None:
        runs.append(1)
        # Fifty distinct numbers: the shrinker has many steps to take towards 0..49.
        if len(set(data.draw(st.lists(st.integers(), min_size=50, max_size=50)))) == 50:
            raise Failed

    counts = []
    for allowed in (5, 40):
        runs.clear()
        with pytest.raises(Failed):
            runner._search(body, 10, seed=1, shrink_calls=allowed)
        counts.append(len(runs))
    assert counts[0] < counts[1] <= counts[0] + 40


def _found(*invariants: tuple[int, ...]) -> dict[type[runner._Found], runner.Counterexample]:
    """Failures of the kinds of each tuple's first invariant, breaking every invariant in it."""
    empty = ContextCommit("s")
    return {
        runner._FOUND[broken[0]]: runner.Counterexample(
            "r", tuple(Violation(n, (), "", "") for n in broken), empty, empty, Facts()
        )
        for broken in invariants
    }


def test_the_law_every_failure_breaks_is_reported() -> None:
    """Invariants 13 and 17: a dropped pin breaks both; the drop (13, on every input) is reported."""
    assert runner._reported(_found((17, 13), (13,))) is runner._FOUND[13]
    # No law common to all: the most specific, as before.
    assert runner._reported(_found((17,), (13,))) is runner._FOUND[17]
    assert runner._reported(_found((4, 17, 13), (17, 13))) is runner._FOUND[17]
    assert runner._reported(_found((8,), (8, 13))) is runner._FOUND[8]


def test_a_rule_that_drops_the_last_item_is_reported_as_losing_it() -> None:
    """Invariant 13: the shrinker's way to a single pinned item does not make it a pin defect."""
    sys.path.insert(0, str(HERE))
    try:
        import broken_rules  # noqa: PLC0415 - lives beside this test
    finally:
        sys.path.remove(str(HERE))
    found = runner.check_rule(
        "drop_item", broken_rules.drop_item(), examples=200, seed=2, fresh=broken_rules.drop_item
    )
    assert found is not None
    assert found.violations[0].invariant == 13
