"""The work `ctxrules check` does, counted: searches, rule runs, what the hash-seed children get.

Each cut of the check's cost is pinned here by a count, so it cannot grow back unseen.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from ctxrules.checker import hashseed, runner, spec_check
from ctxrules.checker.child import fingerprint, packed, unpacked
from ctxrules.checker.fixed import TIKTOKEN_SESSION, fixed_histories
from ctxrules.checker.runner import Checked, Outcome, check_rule
from ctxrules.checker.spec_check import check_pipeline
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.rules import Facts
from ctxrules.spec import load_spec
from ctxrules.testing.histories import commit_ruler
from ctxrules.testing.ruler import CHECK_RULER

HERE = Path(__file__).resolve().parent
SPECS = HERE.parents[1] / "specs"


@pytest.fixture(autouse=True)
def importable_rules() -> Iterator[None]:
    """Make ``broken_rules`` importable for specs that use it."""
    sys.path.insert(0, str(HERE))
    yield
    sys.path.remove(str(HERE))
    sys.modules.pop("broken_rules", None)


def _no_children_nor_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spec_check, "differences", lambda *_args, **_options: None)
    monkeypatch.setattr(spec_check, "check_sessions", lambda *_args, **_options: None)


def test_the_default_specs_cap_and_pipeline_share_one_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rules that look for the same names (none, for the cap and the pipeline) are searched together."""
    groups: list[list[str]] = []

    def searched(rules: list[Checked], **_options: object) -> list[Outcome]:
        groups.append([checked.name for checked in rules])
        return [Outcome(None) for _ in rules]

    monkeypatch.setattr(spec_check, "check_rules", searched)
    _no_children_nor_sessions(monkeypatch)
    spec = SPECS / "default.toml"
    check_pipeline(spec, load_spec(spec).unwrap(), examples=1)
    assert groups == [
        ["cap_tool_result", "<pipeline>"],
        ["age_tool_results"],
        ["gate_tool_results"],
        ["clear_idle"],
    ]


def test_one_search_draws_each_input_once_for_every_rule_of_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A spec of one built-in rule: one search, whose every input the rule and the pipeline meet."""
    searches: list[int] = []
    runs: Counter[str] = Counter()
    search, run_once = runner._search, runner._run_once

    def counted_search(*args: object, **options: object) -> None:
        searches.append(1)
        search(*args, **options)  # type: ignore[arg-type]

    def counted_run(checked: Checked, before: ContextCommit, facts: Facts) -> object:
        runs[checked.name] += 1
        return run_once(checked, before, facts)

    monkeypatch.setattr(runner, "_search", counted_search)
    monkeypatch.setattr(runner, "_run_once", counted_run)
    _no_children_nor_sessions(monkeypatch)
    spec = tmp_path / "spec.toml"
    spec.write_text('[[rules]]\nuse = "cap_tool_result"\n', encoding="utf-8")
    report = check_pipeline(spec, load_spec(spec).unwrap(), examples=20, seed=1)
    assert report.counterexample is None
    assert searches == [1]
    fixed = 2 * len(fixed_histories(()))
    # Each drawn input once or twice (its own earlier output first, one time in four).
    assert fixed + 20 <= runs["cap_tool_result"] <= fixed + 40
    assert runs["<pipeline>"] == runs["cap_tool_result"]


def test_a_rule_found_beside_another_is_searched_again_alone(tmp_path: Path) -> None:
    """The report is the counterexample the rule's own search shrinks to, as before sharing."""
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[[rules]]\nuse = "cap_tool_result"\n'
        '[[rules]]\nuse = "broken_rules:drop_when_long"\nname = "drop"\n',
        encoding="utf-8",
    )
    pipeline = load_spec(spec, allow_imports=True).unwrap()
    report = check_pipeline(spec, pipeline, examples=30, seed=2, allow_imports=True)
    alone = check_rule(
        "drop",
        pipeline.rules[1].rule,
        examples=30,
        seed=2,
        fresh=spec_check.fresh_instance(spec, 1, allow_imports=True),
    )
    assert alone is not None
    assert report.counterexample == alone


def _case(commit: ContextCommit, subject: int = 0) -> hashseed.Case:
    return (subject, commit, Facts(tokenizer=CHECK_RULER), commit)


def test_the_children_get_each_input_once() -> None:
    """Cases sharing an input (the cap and the pipeline on one commit) send its items once."""
    first, second = fixed_histories(())[1:3]
    request = hashseed._request(
        "spec.toml", [_case(first), _case(first, 1), _case(second)], allow_imports=False
    )
    assert len(request["commits"]) == 2  # type: ignore[arg-type]
    assert [index for _, index, _ in request["cases"]] == [0, 0, 1]  # type: ignore[attr-defined]


def test_no_case_counted_by_tiktoken_goes_to_the_children() -> None:
    """Loading its table took each child a quarter of its time; set order does not follow the ruler."""
    samples: list[runner.Run] = []
    rule = load_spec(SPECS / "default.toml").unwrap().rules[0].rule
    assert check_rule("cap", rule, examples=60, seed=1, samples=samples, reruns=1) is None
    assert any(b.session_id == TIKTOKEN_SESSION for b in fixed_histories(()))
    assert samples
    assert all(commit_ruler(before) == "heuristic" for before, _, _ in samples)


def test_a_packed_commit_comes_back_equal_with_its_digest() -> None:
    """The child rebuilds each input from plain fields, equal and with the same content id."""
    for commit in fixed_histories(("grep",))[:4]:
        rebuilt = unpacked(packed(commit))
        assert rebuilt == commit
        assert rebuilt.id == commit.id
        assert rebuilt.items[0] is not commit.items[0]


def test_a_fingerprint_follows_values_not_objects() -> None:
    """Invariant 8: equal outputs of two processes agree, whatever objects they share; a changed field shows."""
    item = ContextItem("t1", "tool", rendered="x" * 50, tool_name="cat", tool_call_id="c1")
    before = ContextCommit("s").with_items([item])
    copy = before.with_items([attrs.evolve(item)])
    assert fingerprint(before, before) == fingerprint(before, copy)
    changed = before.with_items([attrs.evolve(item, reason="other")])
    assert fingerprint(before, changed) != fingerprint(before, before)
    longer = before.append_items([attrs.evolve(item, source_node_id="t2")])
    assert fingerprint(before, longer) != fingerprint(before, before)
    marked = before.with_mark("k", 1)
    assert fingerprint(before, marked) != fingerprint(before, before)
    stale = attrs.evolve(before, digest=before.digest + 1)  # the id no longer the content's
    assert fingerprint(before, stale) != fingerprint(before, before)


def test_the_sessions_grow_while_the_children_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The children rerun the cases beside the sessions, and what they find is reported first."""
    began = threading.Event()
    order: list[str] = []

    def children(*_args: object, **_options: object) -> str:
        order.append("children begin")
        # Run one after the other, the sessions would never begin while this waits.
        order.append("sessions seen" if began.wait(30) else "sessions not seen")
        return "the child process with PYTHONHASHSEED=4 failed: stand-in"

    def sessions(*_args: object, **_options: object) -> runner.Counterexample:
        began.set()
        order.append("sessions")
        return runner.Counterexample("<pipeline>", (), ContextCommit(""), None, Facts())

    monkeypatch.setattr(spec_check, "differences", children)
    monkeypatch.setattr(spec_check, "check_sessions", sessions)
    monkeypatch.setattr(
        spec_check, "check_rules", lambda rules, **_options: [Outcome(None) for _ in rules]
    )
    spec = SPECS / "default.toml"
    found = check_pipeline(spec, load_spec(spec).unwrap(), examples=1).counterexample
    assert "sessions seen" in order
    assert found is not None
    assert found.error == "the child process with PYTHONHASHSEED=4 failed: stand-in"
