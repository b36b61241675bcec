"""Span attributes and events of ctxrules' decisions, as plain values (no OpenTelemetry import).

The names follow the OpenTelemetry GenAI semantic conventions where one exists
(``gen_ai.*``) and are ``ctxrules.*`` for what only ctxrules decides: which rule tightened
how many items and tokens, the batch point and its cause, where the cached prefix broke.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from ctxrules import __version__
from ctxrules.commit import ContextCommit, State
from ctxrules.commit.diff import ChangeKind, CommitDiff, diff_commits
from ctxrules.compaction import CompactResult
from ctxrules.rules.batching import held_back, last_batch
from ctxrules.rules.handles import item_handle
from ctxrules.tokens.usage import ProviderUsage

if TYPE_CHECKING:
    from ctxrules.engine.turn import TurnPrep

#: An attribute value OpenTelemetry accepts (a scalar or a homogeneous sequence).
Value = str | bool | int | float | Sequence[str]
Attributes = dict[str, Value]

#: At most this many receipt events per span: a batch point may tighten hundreds of items.
MAX_RECEIPTS = 64


def usage_attributes(usage: ProviderUsage) -> Attributes:
    """The GenAI usage attributes of one response (input counts every prompt token, cached too).

    >>> usage_attributes(ProviderUsage(100, 20, 900, 50))["gen_ai.usage.input_tokens"]
    1000
    """
    return {
        "gen_ai.usage.input_tokens": usage.prompt_total,
        "gen_ai.usage.output_tokens": usage.completion_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens,
        "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
    }


def _compaction(path: Sequence[str]) -> str | None:
    return next((step.split(":")[1] for step in path if step.startswith("compact:")), None)


def rule_attributes(diff: CommitDiff) -> Attributes:
    """Per rule (named by the reason it writes): items tightened, tokens before and after."""
    found: Attributes = {}
    tallies = diff.by_rule()
    for reason, tally in sorted(tallies.items()):
        found[f"ctxrules.rule.{reason}.items"] = tally.items
        found[f"ctxrules.rule.{reason}.tokens_before"] = tally.tokens_before
        found[f"ctxrules.rule.{reason}.tokens_after"] = tally.tokens_after
    found["ctxrules.rules"] = sorted(tallies)
    return found


def request_attributes(
    prep: TurnPrep, before: ContextCommit | None, rules_version: str
) -> tuple[Attributes, CommitDiff]:
    """The attributes of a prepared request's span, and the diff they were read from."""
    commit = prep.commit
    diff = diff_commits(before, commit)
    batches, why = last_batch(commit)
    batched = before is None or batches != last_batch(before)[0]
    found: Attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.conversation.id": prep.session_id,
        "gen_ai.conversation.compacted": prep.active_summary_id is not None,
        "ctxrules.version": __version__,
        "ctxrules.rules_version": rules_version,
        "ctxrules.commit.rules_version": commit.rules_version,
        "ctxrules.commit.id": commit.id,
        "ctxrules.head": prep.head,
        "ctxrules.request.tokens": prep.request_tokens,
        "ctxrules.history.tokens": commit.total_tokens,
        "ctxrules.items": len(commit.items),
        "ctxrules.items.added": sum(c.kind is ChangeKind.ADDED for c in diff.changes),
        "ctxrules.window": prep.budget.context_window,
        "ctxrules.budget.input": prep.budget.input_budget,
        "ctxrules.occupancy.total_used": prep.occupancy.total_used,
        "ctxrules.occupancy.basis": prep.occupancy.basis.value,
        "ctxrules.decision_path": list(prep.decision_path),
        "ctxrules.batch.point": bool(batched and why is not None),
        "ctxrules.batch.held": held_back(before, commit),
        "ctxrules.prefix.extends": diff.extends,
        "ctxrules.prefix.break_position": -1 if diff.extends else diff.prefix_end,
        "ctxrules.prefix.tokens": diff.prefix_tokens,
    }
    if batched and why is not None:
        found["ctxrules.batch.cause"] = why.name.lower()
    if prep.occupancy.calibration is not None:
        found["ctxrules.occupancy.calibration"] = prep.occupancy.calibration
    if (outcome := _compaction(prep.decision_path)) is not None:
        found["ctxrules.compaction.outcome"] = outcome
    found.update(rule_attributes(diff))
    return found, diff


def receipts(diff: CommitDiff) -> Iterator[tuple[str, Attributes]]:
    """One ``ctxrules.receipt`` event per item hidden this request: its handle, rule and state."""
    hidden = [c for c in diff.changes if c.kind in (ChangeKind.TIGHTENED, ChangeKind.FOLDED)]
    for change in hidden[:MAX_RECEIPTS]:
        item = change.item
        yield (
            "ctxrules.receipt",
            {
                "ctxrules.item.node_id": item.source_node_id,
                "ctxrules.item.handle": item_handle(item),
                "ctxrules.item.rule": item.reason,
                "ctxrules.item.state": item.state.value,
                "ctxrules.item.tokens_before": change.tokens_before,
                "ctxrules.item.tokens_after": item.tokens,
            },
        )
    if len(hidden) > MAX_RECEIPTS:
        yield "ctxrules.receipts_omitted", {"ctxrules.count": len(hidden) - MAX_RECEIPTS}


def compaction_attributes(session_id: str, result: CompactResult) -> Attributes:
    """The attributes of a compaction's span: its outcome, what it folded, tokens before and after.

    >>> from ctxrules.compaction.outcome import Outcome
    >>> r = CompactResult(Outcome.NO_OP, ContextCommit("s"), "c_0", (), 10, 10, reason="nothing_to_fold")
    >>> compaction_attributes("s", r)["ctxrules.compaction.outcome"]
    'no_op'
    """
    summary = any(i.state is State.SUMMARY for i in result.commit.items)
    found: Attributes = {
        "gen_ai.conversation.id": session_id,
        "gen_ai.conversation.compacted": summary,
        "ctxrules.compaction.outcome": result.outcome.value,
        "ctxrules.compaction.base_commit": result.base_commit_id,
        "ctxrules.compaction.folded": result.summarised_count,
        "ctxrules.compaction.tokens_before": result.tokens_before,
        "ctxrules.compaction.tokens_after": result.tokens_after,
        "ctxrules.compaction.fallback": result.fell_back_to_structural,
    }
    if result.reason:
        found["ctxrules.compaction.reason"] = result.reason
    if result.error:
        found["ctxrules.compaction.error"] = result.error
    return found


def warning_events(warnings: Sequence[str]) -> Iterator[tuple[str, Mapping[str, Value]]]:
    """One ``ctxrules.warning`` event per warning of the turn."""
    for text in warnings:
        yield "ctxrules.warning", {"message": text}
