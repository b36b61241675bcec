"""Rerun a spec's rules on recorded inputs in a child process with another ``PYTHONHASHSEED``.

Set and dict-of-set iteration order of strings changes with the hash seed, so a rule that
depends on it is deterministic within one process and differs across processes
(invariant 8). One child runs every sample; its outputs are compared with ours.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence

import attrs
from pyrsistent import pset
from returns.result import Failure

from ctxrules.canonical import canonical_json
from ctxrules.check import Violation
from ctxrules.commit import ContextCommit, commit_from_json, commit_to_json
from ctxrules.rules import Facts
from ctxrules.spec import load_spec
from ctxrules.tokens import HeuristicCounter

#: One recorded run: which subject of the spec (see `runner.subjects`), its input, facts, output.
Case = tuple[int, ContextCommit, Facts, ContextCommit]


@attrs.frozen
class HashSeedDifference:
    """A recorded run whose output differs in a child process with another hash seed."""

    subject: int
    hash_seed: int
    before: ContextCommit
    facts: Facts
    after: ContextCommit
    other: ContextCommit | None
    violation: Violation


def other_hash_seed() -> int:
    """A hash seed different from this process's (which is random unless PYTHONHASHSEED is set)."""
    mine = os.environ.get("PYTHONHASHSEED", "random")
    return (int(mine) + 1) % 4_294_967_296 if mine.isdigit() else 0


def _facts_json(facts: Facts) -> dict[str, object]:
    return {"now": facts.now, "head_turn": facts.head_turn, "cited": sorted(facts.cited),
            "context_window": facts.context_window, "budget": facts.budget}  # fmt: skip


def _output(commit: ContextCommit) -> str:
    return canonical_json(commit_to_json(commit))


def differences(
    spec: str,
    cases: Sequence[Case],
    *,
    allow_imports: bool = False,
    timeout: float = 120.0,
) -> HashSeedDifference | str | None:
    """The smallest case whose output differs under another hash seed, an error text, or None."""
    if not cases:
        return None
    ordered = sorted(cases, key=lambda case: len(case[1].items))
    seed = other_hash_seed()
    request = {
        "spec": spec,
        "allow_imports": allow_imports,
        "path": sys.path,
        "cases": [
            {"subject": s, "commit": commit_to_json(b), "facts": _facts_json(f)}
            for s, b, f, _ in ordered
        ],
    }
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    child = subprocess.run(
        [sys.executable, "-m", "ctxrules.testing.hashseed"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    if child.returncode != 0:
        return f"the child process with PYTHONHASHSEED={seed} failed: {child.stderr.strip()[-400:]}"
    answers: list[str] = json.loads(child.stdout)
    for (subject, before, facts, after), answer in zip(ordered, answers, strict=True):
        if answer != _output(after):
            rebuilt = commit_from_json(json.loads(answer)) if answer.startswith("{") else None
            other = None if rebuilt is None or isinstance(rebuilt, Failure) else rebuilt.unwrap()
            violation = Violation(
                8,
                (),
                "the same output in a process with another hash seed",
                f"a different output with PYTHONHASHSEED={seed} (set or dict order leaks)",
            )
            return HashSeedDifference(subject, seed, before, facts, after, other, violation)
    return None


def _serve(request: dict[str, object]) -> list[str]:
    # Imported here: the runner imports this module's caller side.
    from ctxrules.testing.runner import subjects  # noqa: PLC0415

    pipeline = load_spec(str(request["spec"]), allow_imports=bool(request["allow_imports"]))
    rules = [named.rule for named in subjects(pipeline.unwrap())]
    answers = []
    for case in request["cases"]:  # type: ignore[attr-defined]
        before = commit_from_json(case["commit"]).unwrap()
        given = case["facts"]
        facts = Facts(**{**given, "cited": pset(given["cited"])}, tokenizer=HeuristicCounter())
        try:
            answers.append(_output(rules[case["subject"]](before, facts)))
        except Exception as error:  # noqa: BLE001 - reported as a difference, not a crash
            answers.append(f"raised {type(error).__name__}: {error}")
    return answers


def main() -> None:
    """The child: read the request on stdin, print the outputs as JSON."""
    request = json.loads(sys.stdin.read())
    sys.path[:0] = [p for p in request["path"] if p not in sys.path]
    sys.stdout.write(json.dumps(_serve(request)))


if __name__ == "__main__":
    main()
