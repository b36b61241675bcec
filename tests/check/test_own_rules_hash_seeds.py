"""Invariant 8 across hash seeds for ctxrules's own rules, and how many children a check starts.

`ctxrules check` reruns a spec's clean cases in child processes with other
``PYTHONHASHSEED``s. A spec that names Python code gets six (a user's set-order defect may
show at one seed in two); a spec of built-in and declarative rules gets two, because the
six-seed check of those rules is made here, on every shipped spec, in ctxrules's own CI.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxrules.checker import hashseed, spec_check
from ctxrules.checker.hashseed import CHILDREN, OWN_CHILDREN
from ctxrules.checker.spec_check import check_pipeline
from ctxrules.spec import load_spec

HERE = Path(__file__).resolve().parent
SPECS = sorted((HERE.parents[1] / "specs").glob("*.toml"))


@pytest.fixture(autouse=True)
def importable_rules() -> Iterator[None]:
    """Make ``correct_rules`` importable for specs that use it."""
    sys.path.insert(0, str(HERE))
    yield
    sys.path.remove(str(HERE))
    sys.modules.pop("correct_rules", None)


def _children_started(
    monkeypatch: pytest.MonkeyPatch, spec: Path, *, allow_imports: bool = False
) -> list[int]:
    """The hash seeds of the child processes one small check of ``spec`` starts."""
    seeds: list[int] = []
    run_file = hashseed._run_file

    def counted(request: Path, seed: int, limits: hashseed.Limits) -> list[str] | str:
        seeds.append(seed)
        return run_file(request, seed, limits)

    monkeypatch.setattr(hashseed, "_run_file", counted)
    monkeypatch.setattr(spec_check, "check_sessions", lambda *_args, **_options: None)
    pipeline = load_spec(spec, allow_imports=allow_imports).unwrap()
    report = check_pipeline(spec, pipeline, examples=5, seed=3, allow_imports=allow_imports)
    assert report.counterexample is None
    assert report.hash_seed_children == len(seeds)
    return seeds


def test_a_spec_of_builtin_rules_is_rerun_under_two_hash_seeds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two children for ctxrules's own rules: fewer would compare no two fresh processes."""
    seeds = _children_started(monkeypatch, HERE.parents[1] / "specs" / "default.toml")
    assert OWN_CHILDREN == 2
    assert seeds == list(hashseed.hash_seeds(3, OWN_CHILDREN))


def test_a_spec_naming_python_code_is_rerun_under_six_hash_seeds(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One rule of the user's own among built-ins: the whole spec gets six children."""
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[[rules]]\nuse = "cap_tool_result"\n'
        '[[rules]]\nuse = "correct_rules:clear_over_share"\nname = "mine"\n',
        encoding="utf-8",
    )
    seeds = _children_started(monkeypatch, spec, allow_imports=True)
    assert sorted(seeds) == sorted(hashseed.hash_seeds(3, CHILDREN))


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=[s.stem for s in SPECS])
def test_every_shipped_spec_agrees_under_six_hash_seeds(spec: Path) -> None:
    """Invariant 8: each shipped spec's rules give the same output under six hash seeds.

    What lets a user's check of ctxrules's own rules start two children, not six.
    """
    report = check_pipeline(spec, load_spec(spec).unwrap(), examples=40, seed=5, children=CHILDREN)
    assert report.counterexample is None
    assert report.hash_seed_children == CHILDREN
    assert report.hash_seed_cases >= 4 * len(load_spec(spec).unwrap().rules)


def test_hash_seeds_below_one_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """``--hash-seeds 0`` exits 2 with the option named, no traceback, before any search."""
    from ctxrules.cli.main import main  # noqa: PLC0415 - the command line, as a user runs it

    status = main(["check", str(SPECS[0]), "--hash-seeds", "0"])
    err = capsys.readouterr().err
    assert status == 2
    assert "--hash-seeds" in err
    assert "positive whole number" in err
    assert "Traceback" not in err
