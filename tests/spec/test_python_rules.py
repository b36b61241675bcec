"""Python rules: imported only with permission, built by their factory, failures as values."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.rules import Facts
from ctxrules.spec import load_spec
from ctxrules.tokens import HeuristicCounter

SPECS = Path(__file__).resolve().parents[2] / "specs"
SPEC = '[[rules]]\nname = "no-grep"\nuse = "example_rules:clear_tool"\nparams = { tool = "grep" }\n'


def test_a_python_rule_loads_and_runs_with_permission(example_rules: str) -> None:
    """With allow_imports the factory is called with the params and its rule runs in the pipeline."""
    pipeline = load_spec(SPEC, allow_imports=True).unwrap()
    assert [r.name for r in pipeline.rules] == ["no-grep"]
    results = [
        ContextItem(f"n{i}", "tool", rendered="output " * 50, tool_name=name)
        for i, name in enumerate(["grep", "cat"])
    ]
    commit = ContextCommit("s").append_items(counted(i, HeuristicCounter()) for i in results)
    after = pipeline.run(commit, Facts(now=1.0, tokenizer=HeuristicCounter()))
    assert [(i.state, i.rendered) for i in after.items] == [
        (State.CLEARED, "[cleared]"),
        (State.FULL, "output " * 50),
    ]
    assert example_rules in sys.modules


def test_a_refused_import_imports_nothing(example_rules: str) -> None:
    """Without permission the module is never imported, even though it is importable."""
    assert load_spec(SPEC).failure().errors[0].fault == "imports_refused"
    assert example_rules not in sys.modules


@pytest.mark.parametrize("path", sorted(SPECS.glob("*.toml")), ids=lambda p: p.name)
def test_specs_without_python_rules_never_import(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading a built-in and declarative spec calls no import machinery, even when imports are allowed."""
    calls: list[str] = []
    monkeypatch.setattr(importlib, "import_module", lambda name, *_: calls.append(name))
    assert load_spec(path, allow_imports=True).unwrap().rules
    assert calls == []


@pytest.mark.usefixtures("example_rules")
def test_array_params_arrive_as_tuples() -> None:
    """A factory receives TOML arrays as tuples, so the rule it builds cannot mutate its own config."""
    spec = '[[rules]]\nuse = "example_rules:clear_tool"\nparams = { tool = "grep", placeholder = "x" }\n'
    assert load_spec(spec, allow_imports=True).unwrap().rules[0].name == "example_rules:clear_tool"
    from ctxrules.spec.imports import frozen_params  # noqa: PLC0415 - the helper under test

    assert frozen_params({"a": [1, [2]], "b": {"c": []}}) == {"a": (1, (2,)), "b": {"c": ()}}


def test_python_rule_params_are_part_of_the_version(example_rules: str) -> None:
    """Two Python rules with different params have different versions; equal ones share one."""
    other = SPEC.replace('"grep"', '"cat"')
    first = load_spec(SPEC, allow_imports=True).unwrap().version
    assert load_spec(SPEC, allow_imports=True).unwrap().version == first
    assert load_spec(other, allow_imports=True).unwrap().version != first
    assert example_rules
