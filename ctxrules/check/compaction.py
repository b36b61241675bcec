"""Invariants 5, 13 and 14 (and 3, 4 across an insertion) for compaction; the tests use these."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ctxrules.check.invariants import one_ruler, one_summary
from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.compaction import SUMMARY_ID_PREFIX, CompactResult, Outcome
from ctxrules.dag import Call, Graph, Role, branch, is_attach_pointer, pointer_commit
from ctxrules.tokens import Tokenizer


def is_summary(item: ContextItem) -> bool:
    """Whether the item is a summary, active or replaced: its id has the ``sm_`` prefix."""
    return item.source_node_id.startswith(SUMMARY_ID_PREFIX) or item.state is State.SUMMARY


def summaries_outside_dag(commit: ContextCommit, graph: Graph) -> list[Violation]:
    """Invariant 5: no summary item is a DAG node, and no DAG node is a summary."""
    return summary_items_outside(commit.items, graph) + no_summary_nodes(graph)


def summary_items_outside(items: Iterable[ContextItem], graph: Graph) -> list[Violation]:
    """Invariant 5 on a commit's items: no summary item is a DAG node."""
    return [
        Violation(5, (item.source_node_id,), "a summary only in commits", "a DAG node with its id")
        for item in items
        if is_summary(item) and item.source_node_id in graph
    ]


def no_summary_nodes(graph: Graph) -> list[Violation]:
    """Invariant 5 on a graph: no DAG node has a summary's id."""
    return [
        Violation(5, (node_id,), "no DAG node with a summary id", "a node named sm_…")
        for node_id in graph.nodes
        if node_id.startswith(SUMMARY_ID_PREFIX)
    ]


def _branch_nodes(graph: Graph, head: str | None) -> Iterator[Call]:
    """The head's branch plus each assistant's tool callees: every node a commit holds."""
    for call in branch(graph, head):
        yield call
        if call.role is Role.ASSISTANT:
            for callee in graph.callees_of(call.id):
                if graph.nodes[callee].role is Role.TOOL:
                    yield graph.nodes[callee]


def covered(item: ContextItem, summaries: dict[str, ContextItem]) -> bool:
    """Whether ``merged_into`` leads, summary by summary, to the active one."""
    seen: set[str] = set()
    target = item.merged_into
    while target is not None and target not in seen:
        seen.add(target)
        summary = summaries.get(target)
        if summary is None:
            return False
        if summary.state is State.SUMMARY:
            return True
        target = summary.merged_into
    return False


def nothing_lost(commit: ContextCommit, graph: Graph) -> list[Violation]:
    """Invariant 13: each branch node is an item, shown or covered by the active summary, and in the DAG."""
    own = {i.source_node_id: i for i in commit.items if i.attached_from is None}
    summaries = {i.source_node_id: i for i in commit.items if is_summary(i)}
    found: list[Violation] = []
    for call in _branch_nodes(graph, commit.head_node_id):
        item = own.get(call.id)
        if is_attach_pointer(call):
            # A pointer is no item: it stands for its expanded block (or an earlier expansion).
            if pointer_commit(call) not in commit.attached:
                found.append(Violation(13, (call.id,), "the pointer's source expanded", "none"))
        elif item is None:
            found.append(Violation(13, (call.id,), "an item for the branch node", "none"))
        elif not item.visible and not covered(item, summaries):
            found.append(
                Violation(
                    13,
                    (call.id,),
                    "a summarized item whose merged_into chain reaches the active summary",
                    f"merged_into={item.merged_into!r}",
                )
            )
    found.extend(
        Violation(13, (node_id,), "the item's node recoverable from the DAG by id", "no such node")
        for node_id, item in own.items()
        if not is_summary(item) and node_id not in graph
    )
    return found


def kept_in_order(
    before: ContextCommit, after: ContextCommit, summary_id: str | None
) -> list[Violation]:
    """Invariants 13, 4 and 3 across an insertion: the old items in order, locked ones as they were.

    Apart from the new summary ``summary_id``, ``after`` holds ``before``'s items one for one;
    none loosens or grows, and a locked one is unchanged.
    """
    survivors = [i for i in after.items if i.source_node_id != summary_id]
    old_ids = [(i.source_node_id, i.attached_from) for i in before.items]
    if [(i.source_node_id, i.attached_from) for i in survivors] != old_ids:
        return [
            Violation(
                13,
                (),
                f"the {len(old_ids)} old items in order, plus the summary",
                f"{len(survivors)} items",
            )
        ]
    found: list[Violation] = []
    for old, now in zip(before.items, survivors, strict=True):
        if old.locked and now != old:
            found.append(
                Violation(4, (old.source_node_id,), "the locked item unchanged", now.state.value)
            )
        elif not old.state.may_become(now.state) or now.tokens > old.tokens:
            found.append(
                Violation(
                    3,
                    (old.source_node_id,),
                    f"at least as tight as {old.state.value}, at most {old.tokens} tokens",
                    f"{now.state.value}, {now.tokens} tokens",
                )
            )
    return found


def honest_outcome(result: CompactResult, summarizer_calls: int) -> list[Violation]:
    """Invariant 14: ``finished`` folded something and saved tokens; ``no_op`` never called the LLM."""
    kinds = tuple(event.kind for event in result.events)
    ids = (result.base_commit_id,)
    found: list[Violation] = []
    if result.outcome is Outcome.FINISHED:
        if result.summarised_count <= 0:
            found.append(Violation(14, ids, "summarised_count > 0", str(result.summarised_count)))
        if not result.tokens_after < result.tokens_before:
            found.append(
                Violation(
                    14,
                    ids,
                    f"tokens_after < tokens_before={result.tokens_before}",
                    str(result.tokens_after),
                )
            )
        if result.tokens_after != result.commit.total_tokens + result.fixed_tokens:
            found.append(
                Violation(14, ids, "tokens_after by the one ruler", str(result.tokens_after))
            )
    elif result.outcome is Outcome.NO_OP:
        if summarizer_calls:
            found.append(Violation(14, ids, "no summarizer call", f"{summarizer_calls} calls"))
        if result.commit.id != result.base_commit_id:
            found.append(Violation(14, ids, "the commit unchanged", result.commit.id))
    elif result.summary_id is not None:
        found.append(Violation(14, ids, "no summary after a failure", result.summary_id))
    expected = (
        (Outcome.NO_OP,) if result.outcome is Outcome.NO_OP else (Outcome.STARTED, result.outcome)
    )
    if kinds != expected:
        found.append(
            Violation(
                14, ids, f"events {[k.value for k in expected]}", str([k.value for k in kinds])
            )
        )
    return found


def compaction_step(
    before: ContextCommit,
    result: CompactResult,
    graph: Graph,
    tokenizer: Tokenizer,
    summarizer_calls: int,
) -> list[Violation]:
    """Everything a compaction must keep: invariants 3, 4, 5, 10, 12, 13 and 14."""
    after = result.commit
    found = honest_outcome(result, summarizer_calls)
    if result.outcome is Outcome.FINISHED:
        found += kept_in_order(before, after, result.summary_id)
    return (
        found
        + summaries_outside_dag(after, graph)
        + one_ruler(after, tokenizer)
        + one_summary(after)
        + nothing_lost(after, graph)
    )
