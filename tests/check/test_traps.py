"""Invariant 8's traps: every way a rule may reach the clock or the process is recorded, then undone."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from ctxrules.checker.hashseed import hash_seeds
from ctxrules.checker.purity import run_trapped
from ctxrules.testing.constants import rule_names


def _calls(function: Callable[[], object]) -> list[str]:
    return run_trapped(function, function)[1]


def test_a_clock_held_as_a_default_or_in_a_closure_is_trapped_and_restored() -> None:
    """Invariant 8: time.time bound as a default argument, clock_gettime held by a closure."""

    def by_default(_clock: Callable[[], float] = time.time) -> float:
        return _clock()

    clock = time.clock_gettime

    def by_closure() -> float:
        return clock(time.CLOCK_REALTIME)

    assert _calls(by_default) == ["time.time()"]
    assert _calls(by_closure) == ["time.clock_gettime()"]
    # Undone after the run: the function holds the real clock again.
    assert by_default.__defaults__ == (time.time,)
    assert by_closure.__closure__ is not None
    assert by_closure.__closure__[0].cell_contents is time.clock_gettime


def test_the_environment_and_the_process_are_trapped() -> None:
    """Invariant 8: os.environ (get, getenv, in), os.getpid and thread_time name their call."""
    assert _calls(lambda: os.environ.get("HOME")) == ["os.environ[...]"]
    assert _calls(lambda: os.getenv("HOME")) == ["os.environ[...]"]
    assert _calls(lambda: "HOME" in os.environ) == ["os.environ[...]"]
    # Looked up while the rule runs, as a rule does (a function passed in is the real one).
    assert _calls(lambda: os.getpid()) == ["os.getpid()"]  # noqa: PLW0108
    assert _calls(lambda: time.thread_time_ns()) == ["time.thread_time_ns()"]  # noqa: PLW0108
    assert _calls(lambda: sorted({"b": 1, "a": 2})) == []
    assert os.environ.get("PATH") == os.environ["PATH"]  # the class is untouched afterwards


def test_the_names_a_rule_holds_come_parameters_first() -> None:
    """A factory's parameters (a closure cell) lead; code constants follow; sets in sorted order."""

    def factory(tools: frozenset[str]) -> Callable[[], bool]:
        def rule() -> bool:
            return "screenshot" in tools or "a message, not a name" in tools

        return rule

    assert rule_names(factory(frozenset({"web_search", "bash"}))) == (
        "bash",
        "web_search",
        "screenshot",
    )


def test_the_hash_seeds_follow_the_check_seed() -> None:
    """The children's seeds are fixed by --seed: the same seed, the same three; another, others."""
    assert hash_seeds(7) == hash_seeds(7)
    assert len(set(hash_seeds(7))) == 3
    assert set(hash_seeds(7)).isdisjoint(hash_seeds(8))
