"""Compaction end to end: plan (pure), call the summarizer (the effect), apply (pure)."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ctxrules.commit import ContextCommit
from ctxrules.compaction.apply import apply_summary
from ctxrules.compaction.background import rebase
from ctxrules.compaction.cut import CutParams
from ctxrules.compaction.outcome import CompactResult, failed, no_op, started
from ctxrules.compaction.plan import CompactionPlan, NothingToFold, plan_compaction
from ctxrules.compaction.summarizer import (
    AsyncSummarizer,
    CancelEvent,
    Summarizer,
    SummaryText,
    bound_summary,
    fallback,
    summarize,
    summarize_async,
    summary_budget,
)
from ctxrules.rules import Facts

#: Returns the latest commit for the session's head when the summary is ready to land.
Latest = Callable[[], ContextCommit]


def _land(
    plan: CompactionPlan,
    *,
    summary: SummaryText,
    base: ContextCommit,
    latest: Latest | None,
    facts: Facts,
    fixed_tokens: int,
) -> CompactResult:
    """Apply against the latest commit; an error here fails the compaction, never the caller."""
    current = base
    budget = summary_budget(facts.context_window)
    if not summary.fell_back_to_structural:
        size = facts.tokenizer.count(summary.text)
        if size > budget:
            # A model that ignored the length asked for is not trusted to have summarised:
            # the structural summary is bounded by construction and says what was folded.
            summary = fallback(plan, f"the summary is over its budget ({size} > {budget} tokens)")
    text = bound_summary(summary.text, budget, facts.tokenizer)
    summary = summary if text == summary.text else attrs.evolve(summary, text=text)
    try:
        current = latest() if latest is not None else base
        return apply_summary(plan, summary, current, facts, fixed_tokens=fixed_tokens)
    except Exception as error:  # noqa: BLE001 - a failed compaction must never wedge a session
        opening = started(plan.base_commit_id, plan.summarised_count, plan.tokens_before)
        reason = f"{type(error).__name__}: {error}"
        return failed(
            current,
            plan.base_commit_id,
            opening,
            reason="error",
            error=reason,
            fixed_tokens=fixed_tokens,
        )


def compact(
    commit: ContextCommit,
    summarizer: Summarizer,
    facts: Facts,
    *,
    params: CutParams = CutParams(),  # noqa: B008 - frozen value
    timeout: float | None = None,
    cancel: CancelEvent | None = None,
    latest: Latest | None = None,
    fixed_tokens: int = 0,
) -> CompactResult:
    """Fold the oldest part of ``commit`` into one summary item, with a blocking summarizer.

    ``facts`` gives the window, the input budget served (``budget``), the ruler and the time; ``latest`` (default: ``commit``
    itself) is asked for the head's latest commit before applying, and a result planned
    against an older one is discarded as ``stale``.
    """
    plan = plan_compaction(
        commit, facts.context_window, params, fixed_tokens=fixed_tokens, budget=facts.budget
    )
    if isinstance(plan, NothingToFold):
        return no_op(commit, plan.reason, plan.tokens, fixed_tokens)
    summary = summarize(plan, summarizer, timeout=timeout, cancel=cancel)
    return _land(
        plan, summary=summary, base=commit, latest=latest, facts=facts, fixed_tokens=fixed_tokens
    )


async def compact_async(
    commit: ContextCommit,
    summarizer: AsyncSummarizer,
    facts: Facts,
    *,
    params: CutParams = CutParams(),  # noqa: B008 - frozen value
    timeout: float | None = None,  # noqa: ASYNC109 - it bounds the summarizer call alone
    cancel: CancelEvent | None = None,
    latest: Latest | None = None,
    fixed_tokens: int = 0,
) -> CompactResult:
    """`compact` with a coroutine summarizer; turns may land while it awaits, hence ``latest``."""
    plan = plan_compaction(
        commit, facts.context_window, params, fixed_tokens=fixed_tokens, budget=facts.budget
    )
    if isinstance(plan, NothingToFold):
        return no_op(commit, plan.reason, plan.tokens, fixed_tokens)
    summary = await summarize_async(plan, summarizer, timeout=timeout, cancel=cancel)
    return _land(
        plan, summary=summary, base=commit, latest=latest, facts=facts, fixed_tokens=fixed_tokens
    )


def land_rebased(
    plan: CompactionPlan,
    summary: SummaryText,
    *,
    base: ContextCommit,
    latest: ContextCommit,
    facts: Facts,
    fixed_tokens: int = 0,
) -> CompactResult:
    """Land a summary written in the background on ``latest``, if the prefix it folds is unchanged.

    ``plan`` was made on ``base``; new turns since then keep it valid (the fold is moved
    onto ``latest``), anything that changed the folded prefix makes the result ``stale``.
    """
    moved = rebase(plan, base, latest, fixed_tokens=fixed_tokens)
    if isinstance(moved, str):
        opening = started(plan.base_commit_id, plan.summarised_count, plan.tokens_before)
        return failed(
            latest,
            plan.base_commit_id,
            opening,
            reason="stale",
            error=f"the folded prefix changed: {moved}",
            fixed_tokens=fixed_tokens,
        )
    return _land(
        moved, summary=summary, base=latest, latest=None, facts=facts, fixed_tokens=fixed_tokens
    )
