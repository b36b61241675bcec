"""`ctxrules check` reports each deliberately broken rule with the right invariant, and no built-in."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxrules.checker.runner import check_rule
from ctxrules.cli.main import main

HERE = Path(__file__).resolve().parent
SPECS = sorted((HERE.parents[1] / "specs").glob("*.toml"))
sys.path.insert(0, str(HERE))
import broken_rules  # noqa: E402 - the module lives beside this test
from broken_rules import BROKEN, BROKEN_ACROSS_PROCESSES  # noqa: E402

sys.path.remove(str(HERE))


@pytest.fixture(autouse=True)
def importable_broken_rules() -> Iterator[None]:
    """Make ``broken_rules`` importable for specs that use it."""
    sys.path.insert(0, str(HERE))
    yield
    sys.path.remove(str(HERE))
    sys.modules.pop("broken_rules", None)


def spec_file(folder: Path, use: str, name: str | None = None) -> str:
    """A one-rule spec in ``folder`` using ``use`` (named ``name``); its path."""
    spec = folder / "spec.toml"
    named = f'name = "{name}"\n' if name is not None else ""
    spec.write_text(f'[[rules]]\nuse = "{use}"\n{named}', encoding="utf-8")
    return str(spec)


def run_check(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the command line; return the exit status, stdout and stderr."""
    status = main(["check", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize(("factory", "invariant"), BROKEN.items())
def test_each_broken_rule_is_caught_with_its_invariant(factory: str, invariant: int) -> None:
    """Invariants 2-13: the search finds every broken rule of the table and leads with its law.

    The default search (200 examples), with shrinking cut short: finding is what is tested here.
    """
    rule = getattr(broken_rules, factory)()
    found = check_rule(factory, rule, examples=200, seed=3, shrink_calls=100)
    assert found is not None, f"{factory} was not caught"
    assert found.violations[0].invariant == invariant, [v.message for v in found.violations]


def test_a_size_dependent_defect_is_shown_on_a_long_history() -> None:
    """Invariant 13: a rule that breaks only past 150 items is caught on a generated long history."""
    found = check_rule("drop_when_long", broken_rules.drop_when_long(), examples=200, seed=3)
    assert found is not None
    assert len(found.before.items) > 150
    assert found.violations[0].ids == (found.before.items[100].source_node_id,)


def test_the_report_names_rule_invariant_commit_and_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 1, the rule's name, the invariant's number and name, the commit and the diff."""
    spec = spec_file(tmp_path, "broken_rules:renumber_calls", "renumber")
    status, out, _ = run_check(
        spec, "--allow-imports", "--examples", "100", "--seed", "3", capsys=capsys
    )
    assert status == 1, out
    assert "rule 'renumber' breaks the contract" in out
    assert "invariant 11 (protocol validity)" in out
    assert "before:" in out
    assert "diff (before -> after):" in out


def test_an_impure_rule_is_told_which_call_it_made() -> None:
    """Invariant 8: the report names the clock call the rule made."""
    found = check_rule("office_hours", broken_rules.office_hours(), examples=50, shrink_calls=100)
    assert found is not None
    assert found.violations[0].found == "a call to datetime.now()"
    found = check_rule("one_in_fifty", broken_rules.one_in_fifty(), examples=50, shrink_calls=100)
    assert found is not None
    assert found.violations[0].found == "a write to global '_CALLS'"


@pytest.mark.parametrize(("factory", "invariant"), BROKEN_ACROSS_PROCESSES.items())
def test_a_hash_seed_dependent_rule_is_caught_in_another_process(
    factory: str, invariant: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Invariant 8: set order leaks into the output; a child with another PYTHONHASHSEED shows it."""
    spec = spec_file(tmp_path, f"broken_rules:{factory}", factory)
    status, out, _ = run_check(
        spec, "--allow-imports", "--examples", "40", "--seed", "3", capsys=capsys
    )
    assert status == 1, out
    assert f"invariant {invariant} (pure rendering and rules)" in out, out[-1500:]
    assert "PYTHONHASHSEED=" in out


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_no_builtin_or_shipped_spec_is_reported(
    spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every spec in specs/ passes: exit 0 and a summary naming the invariants checked."""
    status, out, _ = run_check(str(spec), "--examples", "30", "--seed", "1", capsys=capsys)
    assert status == 0, out
    assert f"ok: {spec}" in out
    assert "3 monotone tightening, 4 locked items untouched" in out


def test_a_bad_spec_exits_2_with_the_collected_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A spec that does not load exits 2 and prints its errors."""
    spec = spec_file(tmp_path, "cap_tool_results")
    status, _, err = run_check(spec, capsys=capsys)
    assert status == 2
    assert "did you mean 'cap_tool_result'?" in err


def test_imports_are_refused_without_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A spec naming Python code is refused unless --allow-imports is given."""
    spec = spec_file(tmp_path, "broken_rules:loosen")
    status, _, err = run_check(spec, capsys=capsys)
    assert status == 2
    assert "allow" in err


def test_the_same_seed_gives_the_same_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --seed the counterexample is reproducible."""
    spec = spec_file(tmp_path, "broken_rules:grow_tokens")
    first = run_check(spec, "--allow-imports", "--seed", "5", "--examples", "100", capsys=capsys)
    second = run_check(spec, "--allow-imports", "--seed", "5", "--examples", "100", capsys=capsys)
    assert first == second


def test_plain_lines_when_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    """Without a terminal the progress is plain lines, one per rule."""
    status, out, _ = run_check(str(SPECS[0]), "--examples", "20", "--seed", "2", capsys=capsys)
    assert status == 0
    assert "\r" not in out
    assert out.count("checked ") >= 2
    assert io.StringIO(out).readline().startswith("checked 1/")


def test_the_command_loads_no_hypothesis_plugin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The search needs no other package's plugin: the command asks Hypothesis to load none."""
    monkeypatch.setenv("HYPOTHESIS_NO_PLUGINS", "")
    monkeypatch.delenv("HYPOTHESIS_NO_PLUGINS")
    spec = spec_file(tmp_path, "no_such_rule")
    status, _, err = run_check(spec, capsys=capsys)
    assert status == 2
    assert "no_such_rule" in err
    assert os.environ["HYPOTHESIS_NO_PLUGINS"] == "1"


def test_a_rule_or_factory_that_calls_sys_exit_is_reported_not_obeyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``sys.exit(0)`` in a rule ended `ctxrules check` with status 0 and no output: a CI pass."""
    spec = spec_file(tmp_path, "broken_rules:exit_when_long", "exits")
    status, out, _ = run_check(
        spec, "--allow-imports", "--examples", "50", "--seed", "3", capsys=capsys
    )
    assert status == 1, out
    assert "rule 'exits'" in out
    assert "SystemExit" in out
    status, _, err = run_check(
        spec_file(tmp_path, "broken_rules:exit_on_build"), "--allow-imports", capsys=capsys
    )
    assert status == 2
    assert "an exception (SystemExit: 3)" in err


def test_a_replay_whose_rule_raises_names_the_rule_not_a_bug_in_ctxrules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 and the rule's name: the spec's code failed, not the library."""
    spec = spec_file(tmp_path, "broken_rules:raise_when_long", "boom")
    argv = ["replay", "--spec", spec, "--allow-imports", "--store", ":memory:"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxrules replay: rule 'boom' raised RuntimeError: boom: too long (")
    assert "internal error" not in err


def test_a_rule_that_returns_none_is_told_so() -> None:
    """Not "it raised AttributeError: 'NoneType' object has no attribute 'items'"."""

    def forgets_to_return(commit: object, facts: object) -> None:  # noqa: ARG001 - a Rule
        return None

    found = check_rule("forgets", forgets_to_return, examples=5, seed=3)  # type: ignore[arg-type]
    assert found is not None
    assert found.error == "TypeError: the rule returned NoneType, expected a ContextCommit"
