"""The child process of `ctxrules.checker.hashseed`: rerun recorded cases, print the outputs.

It imports what running a spec's rules needs and nothing of the search (Hypothesis, the
strategies): each of the children starts in a third of the time.
"""

from __future__ import annotations

import json
import sys

from pyrsistent import pset

from ctxrules.canonical import canonical_json
from ctxrules.checker.subjects import subjects
from ctxrules.commit import ContextCommit, commit_from_json, commit_to_json
from ctxrules.rules import Facts
from ctxrules.spec import load_spec
from ctxrules.tokens import HeuristicCounter, Tokenizer, default_tokenizer
from ctxrules.tokens.memo import memoized


def output(commit: ContextCommit) -> str:
    """A rule's output as the children print it and the parent compares it."""
    return canonical_json(commit_to_json(commit))


def ruler(name: str) -> Tokenizer:
    """The ruler of this name, counting as `ctxrules.testing.ruler.check_ruler` does."""
    # Not that function itself: importing ctxrules.testing loads Hypothesis in every child.
    return memoized(HeuristicCounter() if name == "heuristic" else default_tokenizer())


def serve(request: dict[str, object]) -> list[str]:
    """Each case's output (or what it raised), in order."""
    pipeline = load_spec(str(request["spec"]), allow_imports=bool(request["allow_imports"]))
    rules = [named.rule for named in subjects(pipeline.unwrap())]
    rulers: dict[str, Tokenizer] = {}
    answers = []
    for case in request["cases"]:  # type: ignore[attr-defined]
        before = commit_from_json(case["commit"]).unwrap()
        given = case["facts"]
        name = given.pop("ruler")
        tokenizer = rulers.setdefault(name, ruler(name))
        facts = Facts(**{**given, "cited": pset(given["cited"])}, tokenizer=tokenizer)
        try:
            answers.append(output(rules[case["subject"]](before, facts)))
        except Exception as error:  # noqa: BLE001 - reported as a difference, not a crash
            answers.append(f"raised {type(error).__name__}: {error}")
    return answers


def main() -> None:
    """Read the request on stdin, print the outputs as JSON."""
    request = json.loads(sys.stdin.read())
    sys.path[:0] = [p for p in request["path"] if p not in sys.path]
    sys.stdout.write(json.dumps(serve(request)))


if __name__ == "__main__":
    main()
