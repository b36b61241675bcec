"""Checking a recorded session: the invariants that apply to data already written."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator

import attrs
from pyrsistent import pmap

from ctxrules.check.compaction import no_summary_nodes, nothing_lost, summaries_outside_dag
from ctxrules.check.notable import NotableChecks
from ctxrules.check.rendered import RenderedChecks
from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Graph, Role, branch
from ctxrules.generation import CommitMap, ensure_latest_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.tokens import Tokenizer
from ctxrules.tokens.memo import MemoCounter


def whole_session_ruler(tokenizer: Tokenizer) -> Tokenizer:
    """``tokenizer`` remembering every text it counts, for one check over one session.

    Invariant 10 is checked on every commit, and each holds most of the texts of the one
    before: counted afresh each time, a session's check grew with the square of its
    length (a 180-turn store with outputs up to 5 MB took over five minutes). The texts
    are the session's own, held by its graph while it is checked, so none is forgotten.
    """
    unbounded = sys.maxsize
    return MemoCounter(tokenizer, entries=unbounded, characters=unbounded)


def session_head(graph: Graph) -> str | None:
    """The newest node on a conversation chain (not a tool call): where a replay would stand."""
    for node_id in reversed(graph.order):
        if graph.nodes[node_id].caller is None:
            return node_id
    return None


def graph_shape(graph: Graph) -> list[Violation]:
    """Invariant 1 on a recorded graph: seq is the append order and tool calls hang off assistants."""
    found: list[Violation] = []
    for position, node_id in enumerate(graph.order):
        call = graph.nodes[node_id]
        if call.seq != position:
            found.append(Violation(1, (node_id,), f"seq {position} (append order)", str(call.seq)))
        if (
            call.role is Role.TOOL
            and call.caller is not None
            and graph.nodes[call.caller].role is not Role.ASSISTANT
        ):
            found.append(
                Violation(
                    1,
                    (node_id,),
                    "a tool call under an assistant",
                    f"caller role {graph.nodes[call.caller].role.value}",
                )
            )
    return found


def _turn_heads(graph: Graph, head: str) -> Iterator[Call]:
    # One commit per turn: the node before each user message, and the head itself.
    calls = branch(graph, head)
    for previous, current in itertools.pairwise(calls):
        if current.role is Role.USER:
            yield previous
    yield calls[-1]


def verify_graph(graph: Graph, pipeline: Pipeline, facts: Facts) -> list[Violation]:
    """Every violation in a recorded graph and in the commits the pipeline builds turn by turn."""
    found = graph_shape(graph)
    head = session_head(graph)
    if head is None:
        return found
    known: CommitMap = pmap()
    commit: ContextCommit | None = None
    ruler = whole_session_ruler(facts.tokenizer)
    # The commits are built with the same memo: each text is tokenized once in all.
    facts = attrs.evolve(facts, tokenizer=ruler)
    # Invariants 10 and 11 read what each request adds to or changes in the one before.
    rendered = RenderedChecks(ruler)
    # Invariants 6 and 12 read the few summaries and attached items, kept per shared chunk.
    notable = NotableChecks(graph)
    for stop in _turn_heads(graph, head):
        built = ensure_latest_commit(known, graph, stop.id, pipeline, facts)
        commit, known = built.unwrap()
        found += rendered.check(commit)
        found += notable.check(commit)
    if commit is not None:
        found += nothing_lost(commit, graph) + summaries_outside_dag(commit, graph)
    return found


def verify_commits(
    commits: list[ContextCommit], graph: Graph, tokenizer: Tokenizer
) -> list[Violation]:
    """Stored commits against the invariants that apply to them once written: 5, 6, 10, 11, 12.

    The commits are read in order, each from where it differs from the one before (a
    session's stored commits share their chunks): the answers are those of `one_ruler`,
    `protocol_valid`, `one_summary`, `attached_once` and `summaries_outside_dag` on each.
    """
    found: list[Violation] = []
    rendered = RenderedChecks(whole_session_ruler(tokenizer))
    notable = NotableChecks(graph)
    nodes = no_summary_nodes(graph)
    for commit in commits:
        found += rendered.check(commit)
        found += notable.check(commit) + notable.outside() + nodes
    return found
