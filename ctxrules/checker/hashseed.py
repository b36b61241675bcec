"""Rerun a spec's rules on recorded inputs in a child process with another ``PYTHONHASHSEED``.

Set and dict-of-set iteration order of strings changes with the hash seed, so a rule that
depends on it is deterministic within one process and differs across processes
(invariant 8). Six children, each with a hash seed fixed by the check's seed, run every
sample side by side; their outputs are compared with each other first, so the verdict is
the same on every run with the same seed (this process's own hash seed is random), then
with this process's own output, which shows a rule that follows what differs between a
fresh process and this one (the modules loaded, a count of calls, the instance's state).
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs
from returns.result import Failure

from ctxrules.check import Violation
from ctxrules.checker.child import Packed, fingerprint, packed
from ctxrules.checker.watch import CHILD_LIMITS, Limits, Watch, sample
from ctxrules.commit import ContextCommit, commit_from_json
from ctxrules.rules import Facts
from ctxrules.testing.ruler import ruler_name

#: One recorded run: which subject of the spec (see `subjects.subjects`), its input, facts, output.
Case = tuple[int, ContextCommit, Facts, ContextCommit]


@attrs.frozen
class HashSeedDifference:
    """A recorded run whose output differs between two child processes' hash seeds.

    ``after`` is the first child's output, ``other`` that of the child with ``hash_seed``.
    """

    subject: int
    hash_seed: int
    before: ContextCommit
    facts: Facts
    after: ContextCommit
    other: ContextCommit | None
    violation: Violation


#: Child processes, each with its own hash seed: two strings' order differs between two
#: seeds about half the time, so k seeds all agree on a two-element set one time in
#: 2**(k-1). Three missed a rule acting on the first of four ids of a long history at some
#: check seeds (each long input agreeing in all three about 44 % of the time); six make a
#: miss over three such inputs about 1 in 170.
CHILDREN = 6
#: Children for a spec of ctxrules's own rules only (built-in and declarative): their set
#: order is checked under `CHILDREN` seeds by ctxrules's own tests
#: (tests/check/test_own_rules_hash_seeds.py); two still compare fresh processes with each
#: other and with this one, at a third of the cost.
OWN_CHILDREN = 2


def hash_seeds(seed: int | None = None, children: int = CHILDREN) -> tuple[int, ...]:
    """The fixed hash seeds of the children for a check run with ``seed``.

    >>> hash_seeds(7)
    (22, 23, 24, 25, 26, 27)
    """
    base = ((seed or 0) * 3 + 1) % 4_294_967_296
    return tuple((base + k) % 4_294_967_296 for k in range(children))


def _facts_json(facts: Facts) -> dict[str, object]:
    return {"now": facts.now, "head_turn": facts.head_turn, "cited": sorted(facts.cited),
            "context_window": facts.context_window, "budget": facts.budget,
            "ruler": ruler_name(facts.tokenizer)}  # fmt: skip


def differences(
    spec: str,
    cases: Sequence[Case],
    *,
    allow_imports: bool = False,
    limits: Limits = CHILD_LIMITS,
    seed: int | None = None,
    children: int = CHILDREN,
) -> HashSeedDifference | str | None:
    """The smallest case whose output differs between ``children`` hash seeds, an error text, or None.

    A child that hangs (`ctxrules.checker.watch`) gives the error text; one that is only
    slow, on a busy machine, is waited for.
    """
    if not cases:
        return None
    ordered = sorted(cases, key=lambda case: len(case[1].items))
    request = _request(spec, ordered, allow_imports=allow_imports)
    seeds = hash_seeds(seed, children)
    answers = _run_children(pickle.dumps({**request, "full": False}), seeds, limits)
    if isinstance(answers, str):
        return answers
    for index, (subject, before, facts, after) in enumerate(ordered):
        outputs = [child[index] for child in answers]
        other = next((k for k, out in enumerate(outputs) if out != outputs[0]), None)
        if other is None:
            continue
        violation = Violation(
            8,
            (),
            "the same output in processes with other hash seeds",
            f"different outputs with PYTHONHASHSEED={seeds[0]} and {seeds[other]}"
            " (set or dict order leaks)",
        )
        one = _request(spec, [ordered[index]], allow_imports=allow_imports)
        first, second = (_whole(one, seeds[k], limits) for k in (0, other))
        return HashSeedDifference(
            subject, seeds[other], before, facts, first or after, second, violation
        )
    for index, (subject, before, facts, after) in enumerate(ordered):
        # The children agree: this process's own output must be theirs too.
        if answers[0][index] == fingerprint(before, after):
            continue
        violation = Violation(
            8,
            (),
            "the same output in this process as in fresh ones",
            f"a different output with PYTHONHASHSEED={seeds[0]} than here"
            " (the rule follows process state: loaded modules, earlier calls, its instance)",
        )
        one = _request(spec, [ordered[index]], allow_imports=allow_imports)
        return HashSeedDifference(
            subject, seeds[0], before, facts, after, _whole(one, seeds[0], limits), violation
        )
    return None


def _request(spec: str, cases: Sequence[Case], *, allow_imports: bool) -> dict[str, object]:
    """What the children are sent: each input commit once, and the cases naming it."""
    commits: list[Packed] = []
    known: dict[str, int] = {}
    named = []
    for subject, before, facts, _ in cases:
        index = known.setdefault(before.id, len(commits))
        if index == len(commits):
            commits.append(packed(before))
        named.append((subject, index, _facts_json(facts)))
    return {
        "spec": spec,
        "allow_imports": allow_imports,
        "path": sys.path,
        "commits": commits,
        "cases": named,
    }


def _whole(request: dict[str, object], seed: int, limits: Limits) -> ContextCommit | None:
    """The whole output of the request's one case in the child with ``seed`` (for the report)."""
    answers = _run_child(pickle.dumps({**request, "full": True}), seed, limits)
    return None if isinstance(answers, str) or not answers else _rebuilt(answers[0])


def _run_children(request: bytes, seeds: Sequence[int], limits: Limits) -> list[list[str]] | str:
    """Every child's outputs, the children run side by side; or the text of the first failure."""
    with tempfile.TemporaryDirectory(prefix="ctxrules-check-") as folder:
        path = Path(folder) / "request.pickle"
        path.write_bytes(request)  # once for all the children
        with ThreadPoolExecutor(max_workers=len(seeds)) as pool:
            results = list(pool.map(lambda seed: _run_file(path, seed, limits), seeds))
    failure = next((r for r in results if isinstance(r, str)), None)
    return failure if failure is not None else [r for r in results if not isinstance(r, str)]


def _run_child(request: bytes, seed: int, limits: Limits) -> list[str] | str:
    """One child's outputs with ``PYTHONHASHSEED=seed``, or why it gave none."""
    with tempfile.TemporaryDirectory(prefix="ctxrules-check-") as folder:
        path = Path(folder) / "request.pickle"
        path.write_bytes(request)
        return _run_file(path, seed, limits)


def _run_file(request: Path, seed: int, limits: Limits) -> list[str] | str:
    """`_run_child` of a request written to a file (the child reads it, never waiting on us)."""
    command = [
        sys.executable, "-m", "ctxrules.checker.child", str(limits.cpu_seconds), str(request),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    answer = _watched(command, env, limits)
    if isinstance(answer, str):
        return f"the child process with PYTHONHASHSEED={seed} hung ({answer})"
    returncode, out, err = answer
    if returncode == -getattr(signal, "SIGXCPU", -1):
        return (
            f"the child process with PYTHONHASHSEED={seed} hung"
            f" ({limits.cpu_seconds} s of CPU without an answer)"
        )
    if returncode != 0:
        error = err.decode("utf-8", "replace").strip()[-400:]
        return f"the child process with PYTHONHASHSEED={seed} failed: {error}"
    answers: list[str] = json.loads(out)
    return answers


def _watched(
    command: list[str], env: dict[str, str], limits: Limits
) -> tuple[int, bytes, bytes] | str:
    """Run ``command`` to its end: its exit code and output, or why it hung.

    Its input and output are files, never pipes: a child never waits for this process
    (which a busy machine may leave waiting for a CPU), so a child that sits idle is
    blocked by its own doing.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(  # noqa: S603 - this Python, running ctxrules's own child module
            command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env
        )
        watch = Watch(limits, time.monotonic())
        while True:
            try:
                process.wait(timeout=limits.poll_seconds)
            except subprocess.TimeoutExpired:
                why = watch.hung(time.monotonic(), sample(process.pid))
                if why is None:
                    continue
                process.kill()
                process.wait()
                return why
            out.seek(0)
            err.seek(0)
            return process.returncode, out.read(), err.read()


def _rebuilt(answer: str) -> ContextCommit | None:
    rebuilt = commit_from_json(json.loads(answer)) if answer.startswith("{") else None
    return None if rebuilt is None or isinstance(rebuilt, Failure) else rebuilt.unwrap()
