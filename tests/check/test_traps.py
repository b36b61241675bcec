"""Invariant 8's traps: every way a rule may reach the clock or the process is recorded, then undone."""

from __future__ import annotations

import ast
import builtins
import io
import os
import pathlib
import subprocess
import sys
import time
from collections.abc import Callable

import attrs

import ctxrules.testing
from ctxrules.checker.hashseed import CHILDREN, HashSeedDifference, differences, hash_seeds
from ctxrules.checker.purity import module_state, run_trapped, state_changes
from ctxrules.checker.runner import rule_violations
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.render import counted
from ctxrules.rules import Facts
from ctxrules.spec import load_spec
from ctxrules.testing.constants import rule_names
from ctxrules.testing.ruler import CHECK_RULER


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
    """The children's seeds are fixed by --seed: the same seed, the same six; another, others.

    The first three are those of the three children there were before, so a check that
    caught a rule at a seed still catches it.
    """
    assert hash_seeds(7) == hash_seeds(7)
    assert len(set(hash_seeds(7))) == CHILDREN == 6
    assert hash_seeds(7)[:3] == (22, 23, 24)
    assert set(hash_seeds(7)) != set(hash_seeds(8))


def test_files_the_working_directory_and_argv_are_trapped() -> None:
    """Invariant 8: open, pathlib reads, os.getcwd, os.listdir and sys.argv name their read."""
    here = pathlib.Path(__file__)
    assert _calls(lambda: here.read_text(encoding="utf-8")[:1]) == [
        "pathlib.Path.read_text()",
        "pathlib.Path.open()",
        "open()",
    ]
    assert _calls(lambda: here.exists()) == ["pathlib.Path.exists()", "os.stat()"]  # noqa: PLW0108
    assert _calls(lambda: open(here, encoding="utf-8").close()) == ["open()"]  # noqa: PTH123
    assert _calls(lambda: os.getcwd()) == ["os.getcwd()"]  # noqa: PLW0108, PTH109
    assert _calls(lambda: os.listdir(here.parent)[:0]) == ["os.listdir()"]  # noqa: PTH208
    assert _calls(lambda: "--keep" in sys.argv) == ["sys.argv"]
    assert _calls(lambda: sys.argv[0]) == ["sys.argv"]
    assert type(sys.argv) is list  # restored afterwards
    assert open is builtins.open is io.open


def test_writes_to_default_arguments_and_fields_are_seen() -> None:
    """Invariant 8: a memo in a mutable default and a counter in an object's field."""

    def rule(seen: list[int] = []) -> None:  # noqa: B006 - the defect under test
        seen.append(1)

    before = module_state(rule)
    rule()
    assert state_changes(before, module_state(rule)) == ["default argument 'seen'"]

    class Counting:
        def __init__(self) -> None:
            self.calls = 0

        def __call__(self) -> None:
            self.calls += 1

    counting = Counting()
    before = module_state(counting)
    counting()
    assert state_changes(before, module_state(counting)) == ["field 'calls'"]


def test_a_clock_held_in_a_field_of_a_callable_is_trapped_and_restored() -> None:
    """Invariant 8: a frozen rule object holding time.time under another name."""

    @attrs.frozen
    class Stamped:
        stamp: Callable[[], float] = time.time

        def __call__(self) -> float:
            return self.stamp()

    stamped = Stamped()
    assert run_trapped(stamped, stamped)[1] == ["time.time()"]
    assert stamped.stamp is time.time


def test_a_fresh_process_that_disagrees_with_this_one_is_reported() -> None:
    """Invariant 8: the children agree with each other, but not with this process's output."""
    spec = '[[rules]]\nuse = "cap_tool_result"\n'
    item = ContextItem("t1", "tool", rendered="x" * 50, tool_name="cat", tool_call_id="c1")
    before = ContextCommit("s").with_items([counted(item, CHECK_RULER)])
    facts = Facts(tokenizer=CHECK_RULER)
    after = load_spec(spec).unwrap().rules[0].rule(before, facts)
    assert differences(spec, [(0, before, facts, after)], seed=1) is None
    claimed = after.replace_items({0: attrs.evolve(after.items[0], reason="other")})
    found = differences(spec, [(0, before, facts, claimed)], seed=1)
    assert isinstance(found, HashSeedDifference)
    assert found.violation.expected == "the same output in this process as in fresh ones"
    assert found.other == after


def test_importing_the_strategies_does_no_process_or_file_work() -> None:
    """`ctxrules.testing` imports none of the checker's shell; its modules open no file or process."""
    child = subprocess.run(
        [sys.executable, "-c", "import sys, ctxrules.testing; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "ctxrules.checker" not in child.stdout
    shell = {"subprocess", "importlib.resources", "pathlib", "shutil", "tempfile"}
    for path in pathlib.Path(ctxrules.testing.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not imported & shell, (path.name, imported & shell)
        calls = [
            node.func.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        ]
        assert "open" not in calls, path.name


def test_a_modified_input_is_reported_as_received_beside_what_the_rule_wrote() -> None:
    """Invariant 8: the report's input is the commit as the rule received it, its output what the rule wrote."""

    def rule(commit: ContextCommit, _facts: Facts) -> ContextCommit:
        object.__setattr__(commit.items[0], "reason", "mutated")
        return commit

    item = counted(ContextItem("n1", "user", rendered="hello there"), CHECK_RULER)
    before = ContextCommit("s").append_items([item])
    after, violations = rule_violations(rule, before, Facts(tokenizer=CHECK_RULER))
    assert (8, "a modified input") in {(v.invariant, v.found) for v in violations}
    assert before.items[0].reason == "new"
    assert item.reason == "new"
    assert after.items[0].reason == "mutated"
    assert after.items[0] is not item
