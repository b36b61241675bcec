"""The child process of `ctxrules.checker.hashseed`: rerun recorded cases, print the outputs.

It imports what running a spec's rules needs and nothing of the search (Hypothesis, the
strategies): each of the children starts in a third of the time. The request arrives as a
pickle of plain fields (`packed`), each input once however many cases share it, and each
answer is a `fingerprint` of the output; the whole output (`output`) only when asked.
"""

from __future__ import annotations

import hashlib
import json
import operator
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeAlias

import attrs
from pyrsistent import pset

from ctxrules.canonical import canonical_json
from ctxrules.checker.subjects import subjects
from ctxrules.commit import ContextCommit, ContextItem, commit_to_json
from ctxrules.commit.vector import ItemVector
from ctxrules.errors import USER_CODE_ERRORS
from ctxrules.rules import Facts
from ctxrules.spec import load_spec
from ctxrules.tokens import HeuristicCounter, Tokenizer, default_tokenizer
from ctxrules.tokens.memo import memoized

#: The fields an item is built from, in the order its ``__init__`` takes them.
_init_fields = operator.attrgetter(*(a.name for a in attrs.fields(ContextItem) if a.init))
#: A commit as plain fields: its header, its marks, attached ids, digest and items' fields.
Packed: TypeAlias = tuple[Any, ...]


def output(commit: ContextCommit) -> str:
    """A rule's whole output as canonical JSON (what a report rebuilds the commit from)."""
    return canonical_json(commit_to_json(commit))


def fingerprint(before: ContextCommit, after: ContextCommit) -> str:
    """A digest of every field of ``after`` (its content id too), the same in every process for equal outputs.

    An item equal to the input's at its position is written as that position only: the
    outputs of two processes agree on it exactly when their items do, and most items of a
    rule's output are its input's.
    """
    old = before.items
    items = [
        i if i < len(old) and (item is old[i] or item == old[i]) else item.to_json()
        for i, item in enumerate(after.items)
    ]
    header = [after.session_id, list(after.parent_ids), after.created_at, after.head_node_id,
              after.rules_version, after.total_tokens, after.summary,
              sorted(dict(after.marks).items()), sorted(after.attached), after.digest]  # fmt: skip
    text = json.dumps([header, len(old), items], ensure_ascii=False, allow_nan=True)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def packed(commit: ContextCommit) -> Packed:
    """The commit as plain fields for the child (`unpacked` builds it back)."""
    header = (commit.session_id, commit.parent_ids, commit.created_at, commit.head_node_id,
              commit.rules_version, commit.total_tokens, commit.summary)  # fmt: skip
    marks = (tuple(commit.marks), tuple(commit.marks.values()))
    items = [_init_fields(item) for item in commit.items]
    return header, marks, sorted(commit.attached), commit.digest, items


def unpacked(fields: Packed) -> ContextCommit:
    """The commit `packed` was given, of new objects (its digest kept, not recomputed)."""
    header, marks, attached, digest, items = fields
    session_id, parent_ids, created_at, head_node_id, rules_version, total_tokens, summary = header
    return ContextCommit(
        session_id,
        parent_ids,
        created_at,
        head_node_id,
        rules_version,
        ItemVector.of(ContextItem(*item) for item in items),
        total_tokens,
        summary,
        dict(zip(*marks, strict=True)),
        pset(attached),
        digest=digest,
    )


def ruler(name: str) -> Tokenizer:
    """The ruler of this name, counting as `ctxrules.testing.ruler.check_ruler` does."""
    # Not that function itself: importing ctxrules.testing loads Hypothesis in every child.
    return memoized(HeuristicCounter() if name == "heuristic" else default_tokenizer())


def serve(request: dict[str, Any]) -> list[str]:
    """Each case's fingerprint, or whole output with ``full`` (or what it raised), in order."""
    pipeline = load_spec(str(request["spec"]), allow_imports=bool(request["allow_imports"]))
    rules = [named.rule for named in subjects(pipeline.unwrap())]
    commits: Sequence[Packed] = request["commits"]
    rulers: dict[str, Tokenizer] = {}
    answers = []
    for subject, index, given in request["cases"]:
        # Built anew for each case: no case sees objects another case's rule was given.
        before = unpacked(commits[index])
        name = given.pop("ruler")
        tokenizer = rulers.setdefault(name, ruler(name))
        facts = Facts(**{**given, "cited": pset(given["cited"])}, tokenizer=tokenizer)
        try:
            after = rules[subject](before, facts)
            answers.append(output(after) if request["full"] else fingerprint(before, after))
        except USER_CODE_ERRORS as error:  # reported as a difference, not a crash
            answers.append(f"raised {type(error).__name__}: {error}")
    return answers


def _limit_cpu(seconds: int) -> None:
    try:
        import resource  # noqa: PLC0415 - POSIX only; elsewhere the parent's clock limit stands
    except ImportError:
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    limit = seconds if hard == resource.RLIM_INFINITY else min(seconds, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))


def main() -> None:
    """Read the pickled request (from the file named second, or stdin), print the answers as JSON.

    The first argument, if any, is the CPU seconds this process may use: past them the
    kernel stops it (a rule that never returns), however long a busy machine makes it wait.
    """
    if len(sys.argv) > 1:
        _limit_cpu(int(sys.argv[1]))
    given = Path(sys.argv[2]).read_bytes() if len(sys.argv) > 2 else sys.stdin.buffer.read()
    # The parent process wrote it, a moment ago, for this process alone.
    request = pickle.loads(given)  # noqa: S301
    sys.path[:0] = [p for p in request["path"] if p not in sys.path]
    sys.stdout.write(json.dumps(serve(request)))


if __name__ == "__main__":
    main()
