"""`ctxrules verify PATH`: check a recorded session (JSON Lines of its DAG, or a store) against the invariants."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from returns.result import Failure, Success

from ctxrules.check import Violation, recoverable
from ctxrules.check.history import contents_addressed
from ctxrules.check.recorded import session_head, verify_commits, verify_graph
from ctxrules.check.recoverable import RecoverableChecks
from ctxrules.cli.options import spec_source
from ctxrules.cli.stored_log import missing_session, names_store, open_read_only
from ctxrules.dag import Graph, graph_from_jsonl
from ctxrules.generation import NO_COMMITS, ensure_latest_commit
from ctxrules.recall.lookup import node_index
from ctxrules.rules import Facts, Pipeline
from ctxrules.spec import load_spec
from ctxrules.tokens import ENCODINGS, HeuristicCounter, Tokenizer, load_encoding

#: What ``--tokenizer`` names besides the tiktoken encodings.
HEURISTIC = "heuristic"

#: One loaded session: its id, graph, stored commits, offloaded originals by handle, and the
#: commits its commits attached (by id), which hold the originals of attached items.
Loaded = tuple[str, Graph, list[Any], dict[str, str], dict[str, Any]]


def _from_store(path: str, session: str | None) -> list[Loaded] | str:
    store = open_read_only(path)
    if isinstance(store, str):
        return store
    try:
        listed = store.list_sessions()
        if isinstance(listed, Failure):
            return str(listed.failure())
        held = [info.id for info in listed.unwrap()]
        if session is not None and session not in held:
            return missing_session(path, session)
        ids = [session] if session is not None else held
        found = []
        for session_id in ids:
            graph, commits = store.load_graph(session_id), store.commits_for(session_id)
            blobs = (
                store.session_blobs(session_id) if hasattr(store, "session_blobs") else Success({})
            )
            for result in (graph, commits, blobs):
                if isinstance(result, Failure):
                    return str(result.failure())
            # A source that cannot be loaded stays out: its items are reported unrecoverable.
            attached = {a for commit in commits.unwrap() for a in commit.attached}
            sources = {
                a: loaded.unwrap()
                for a in sorted(attached)
                if not isinstance(loaded := store.get_commit(a), Failure)
            }
            found.append((session_id, graph.unwrap(), commits.unwrap(), blobs.unwrap(), sources))
        return found
    finally:
        store.close()


def _load(path: str, session: str | None) -> list[Loaded] | str:
    if names_store(path):
        return _from_store(path, session)
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        return f"{path}: cannot read: {error}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"{path}: cannot read: {error}"
    if not text.strip():
        # Nothing to check is no pass: said as `export` and `replay` say it.
        return f"{path}: empty input: nothing to import"
    graph = graph_from_jsonl(text)
    if isinstance(graph, Failure):
        return f"{path}: {graph.failure()}"
    return [(Path(path).stem, graph.unwrap(), [], {}, {})]


def recoverability(  # noqa: PLR0917 - one call site, each argument a loaded part
    graph: Graph,
    commits: list[Any],
    blobs: dict[str, str],
    pipeline: Pipeline,
    facts: Facts,
    sources: dict[str, Any] | None = None,
) -> list[Violation]:
    """Invariant 16 on every stored commit, and on the commit the pipeline builds at the head."""
    nodes = node_index(graph, blobs)
    # Stored in order, most commits only add items to the one before: those are checked alone.
    checks = RecoverableChecks(graph, nodes, sources or {})
    found = [v for commit in commits for v in checks.check(commit)]
    head = session_head(graph)
    if head is not None and pipeline.rules:
        built = ensure_latest_commit(NO_COMMITS, graph, head, pipeline, facts)
        if not isinstance(built, Failure):
            found += recoverable(built.unwrap()[0], graph, blobs, nodes=nodes)
    return found


def ruler(name: str | None) -> Tokenizer | str:
    """The tokenizer ``--tokenizer`` names (the default one when None), or why it cannot load."""
    if name is None:
        return Facts().tokenizer
    if name == HEURISTIC:
        return HeuristicCounter()
    if name not in ENCODINGS:
        names = ", ".join([*ENCODINGS, HEURISTIC])
        return f"--tokenizer {name!r}: expected one of {names}"
    loaded = load_encoding(name)
    if isinstance(loaded, Failure):
        return f"--tokenizer {name!r}: {loaded.failure()}"
    return loaded.unwrap()


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Report every violation with its ids; 0 clean, 1 violations, 2 unreadable input."""
    tokenizer = ruler(args.tokenizer)
    if isinstance(tokenizer, str):
        sys.stderr.write(tokenizer + "\n")
        return 2
    loaded = _load(args.path, args.session)
    if isinstance(loaded, str):
        sys.stderr.write(loaded + "\n")
        return 2
    pipeline = Pipeline()
    if args.spec is not None:
        source = spec_source(args.spec)
        if isinstance(source, Failure):
            sys.stderr.write(source.failure() + "\n")
            return 2
        spec = load_spec(source.unwrap())
        if isinstance(spec, Failure):
            sys.stderr.write(f"{spec.failure()}\n")
            return 2
        pipeline = spec.unwrap()
    total_nodes, violations = 0, []
    facts = Facts(tokenizer=tokenizer)
    for _, graph, commits, blobs, sources in loaded:
        total_nodes += len(graph)
        found: list[Violation] = verify_graph(graph, pipeline, facts)
        found += verify_commits(commits, graph, facts.tokenizer)
        found += contents_addressed(commits)
        found += recoverability(graph, commits, blobs, pipeline, facts, sources)
        violations.extend(found)
    out.writelines(f"{args.path}: {violation.message}\n" for violation in violations)
    if any(v.invariant == 10 for v in violations):
        # A store written with another ruler reads as wrong counts: say which ruler counted.
        out.write(
            f"counted with {tokenizer.name}; if the session was written with another ruler,"
            " pass it with --tokenizer\n"
        )
    out.write(
        f"{'ok' if not violations else 'FAILED'}: {total_nodes} nodes, {len(violations)} violations\n"
    )
    return 1 if violations else 0


def register(commands: Any) -> None:  # noqa: ANN401 - argparse's subparsers type is private
    """Add the ``verify`` subcommand."""
    parser = commands.add_parser("verify", help="check a recorded session against the invariants")
    parser.add_argument(
        "path",
        help="a session's DAG as JSON Lines (ctxrules export), a SQLite store (told by its header,"
        " or a name ending .sqlite, .sqlite3 or .db, even when empty), or postgresql://...",
    )
    parser.add_argument(
        "--session", default=None, help="in a store, only this session (default: all)"
    )
    parser.add_argument(
        "--spec", default=None, help="build the commits with this spec (default: no rules)"
    )
    parser.add_argument(
        "--tokenizer",
        default=None,
        metavar="NAME",
        help="count with this ruler, the one the session was written with: a tiktoken"
        f" encoding ({', '.join(ENCODINGS)}) or {HEURISTIC!r} (default: cl100k_base)",
    )
    parser.set_defaults(run=run)
