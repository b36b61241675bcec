"""`ctxrules check`, third round: each broken rule of `broken_rules_three` is caught with its law.

The default run tries one seed each; `bench/check_broken_rules.py` tries three and times them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxrules.checker import spec_check
from ctxrules.checker.runner import Checked, Outcome, check_rule
from ctxrules.checker.spec_check import check_pipeline
from ctxrules.spec import load_spec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import broken_rules_three  # noqa: E402 - the module lives beside this test
import correct_rules  # noqa: E402
from broken_rules_three import BROKEN_THREE, NO_HANDLE_SPEC  # noqa: E402

sys.path.remove(str(HERE))


@pytest.fixture(autouse=True)
def importable_rules() -> Iterator[None]:
    """Make the rule modules importable for specs that use them."""
    sys.path.insert(0, str(HERE))
    yield
    sys.path.remove(str(HERE))


@pytest.mark.parametrize(("factory", "invariant"), BROKEN_THREE.items())
def test_each_third_round_rule_is_caught_with_its_invariant(factory: str, invariant: int) -> None:
    """Invariants 3, 8, 10, 11, 13, 15, 16: found, and the report leads with the rule's law.

    Rebuilt from its factory for reruns, as `ctxrules check` rebuilds a spec's Python rule.
    """
    make = getattr(broken_rules_three, factory)
    found = check_rule(factory, make(), examples=200, seed=3, shrink_calls=100, fresh=make)
    assert found is not None, f"{factory} was not caught"
    assert found.violations, found.error
    assert found.violations[0].invariant == invariant, [v.message for v in found.violations]


def test_an_unrecoverable_item_is_reported_with_its_handle_and_what_it_resolves_to() -> None:
    """Invariant 16: the counterexample names the item, its own handle and the handle it shows."""
    found = check_rule("neighbour", broken_rules_three.note_names_neighbour(), examples=100, seed=1)
    assert found is not None
    violation = found.violations[0]
    item, handle = violation.ids
    assert violation.expected == f"the item's handle {handle} named in its text"
    assert ", which resolves to item " in violation.found
    assert found.after is not None
    assert found.after.items[found.after.index_of(item) or 0].state.value == "aged"


def test_a_memo_by_commit_id_needs_a_fresh_instance() -> None:
    """Invariant 8: reruns on one instance agree with its memo; a fresh instance does not."""
    make = broken_rules_three.memo_by_commit_id
    assert check_rule("memo", make(), examples=60, seed=2, shrink_calls=100) is None
    found = check_rule("memo", make(), examples=60, seed=2, shrink_calls=100, fresh=make)
    assert found is not None
    assert found.violations[0].found.startswith("a different output on run")


def _check_spec(text: str, tmp_path: Path, seed: int, examples: int = 60) -> object:
    spec = tmp_path / "spec.toml"
    spec.write_text(text, encoding="utf-8")
    pipeline = load_spec(spec, allow_imports=True).unwrap()
    return check_pipeline(spec, pipeline, examples=examples, seed=seed, allow_imports=True)


def test_a_declarative_template_without_a_handle_is_caught(tmp_path: Path) -> None:
    """Invariant 16: a declarative rule that clears results without ``{handle}``."""
    report = _check_spec(NO_HANDLE_SPEC, tmp_path, seed=3)
    found = report.counterexample  # type: ignore[attr-defined]
    assert found is not None
    assert found.rule == "clear-old"
    assert found.violations[0].invariant == 16


def test_a_rule_that_follows_process_state_differs_from_fresh_processes(tmp_path: Path) -> None:
    """Invariant 8: children agree with each other but not with this process's own output."""
    broken_rules_three.warm_up_calls()(broken_rules_three.ContextCommit("s"), correct_rules.Facts())
    for _ in range(40):  # this process is past its warm-up; fresh ones are not
        next(broken_rules_three._WARM)
    text = '[[rules]]\nuse = "broken_rules_three:warm_up_calls"\nname = "warm"\n'
    found = _check_spec(text, tmp_path, seed=3, examples=30).counterexample  # type: ignore[attr-defined]
    assert found is not None
    assert found.violations[0].invariant == 8
    assert "than here" in found.violations[0].found


def test_the_controls_pass(tmp_path: Path) -> None:
    """No false alarm: a batched aging rule and a rule that reads the window and budget."""
    report = _check_spec(correct_rules.CONTROLS_SPEC, tmp_path, seed=1, examples=100)
    assert report.counterexample is None, report.counterexample  # type: ignore[attr-defined]


def test_own_rules_are_rerun_once_and_user_code_three_times(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Invariant 8: a built-in holds no state to rebuild or count with; a user's rule may."""
    reruns: dict[str, int] = {}

    def searched(rules: list[Checked], **_options: object) -> list[Outcome]:
        reruns.update((checked.name, checked.reruns) for checked in rules)
        return [Outcome(None) for _ in rules]

    monkeypatch.setattr(spec_check, "check_rules", searched)
    monkeypatch.setattr(spec_check, "differences", lambda *_args, **_options: None)
    monkeypatch.setattr(spec_check, "check_sessions", lambda *_args, **_options: None)
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[[rules]]\nuse = "clear_idle"\n[[rules]]\nuse = "correct_rules:clear_over_share"\n',
        encoding="utf-8",
    )
    pipeline = load_spec(spec, allow_imports=True).unwrap()
    check_pipeline(spec, pipeline, examples=1, allow_imports=True)
    assert reruns == {"clear_idle": 1, "correct_rules:clear_over_share": 3, "<pipeline>": 3}
    builtin = tmp_path / "builtin.toml"
    builtin.write_text('[[rules]]\nuse = "clear_idle"\n', encoding="utf-8")
    check_pipeline(builtin, load_spec(builtin).unwrap(), examples=1)
    assert reruns["<pipeline>"] == 1
