"""Compaction: the cut, the policy, the injected summarizer, and honest outcomes."""

from ctxrules.compaction.apply import COMPACTED, SUMMARY_ID_PREFIX, apply_summary, summary_id
from ctxrules.compaction.background import growth_until_landing, lands_now, prefix_change, rebase
from ctxrules.compaction.compact import Latest, compact, compact_async, land_rebased
from ctxrules.compaction.cut import (
    ATTACH_CLOSE,
    ATTACH_OPEN,
    CutParams,
    attach_blocks,
    find_cut_index,
    fold_bounds,
    has_text,
    keep_tokens,
)
from ctxrules.compaction.outcome import CompactionEvent, CompactResult, Outcome
from ctxrules.compaction.plan import CompactionPlan, NothingToFold, plan_compaction
from ctxrules.compaction.policy import Action, Hold, Policy, decide, hold_after
from ctxrules.compaction.prompts import SECTIONS, SYSTEM_PROMPT, prompt_messages
from ctxrules.compaction.snip import SNIP_MARKER, Snipped, snip
from ctxrules.compaction.summarizer import (
    AsyncSummarizer,
    CancelEvent,
    Summarizer,
    SummaryCancelled,
    SummaryText,
    UnusableSummary,
    received,
    structural_summary,
    summarize,
    summarize_async,
)

__all__ = [
    "ATTACH_CLOSE",
    "ATTACH_OPEN",
    "COMPACTED",
    "SECTIONS",
    "SNIP_MARKER",
    "SUMMARY_ID_PREFIX",
    "SYSTEM_PROMPT",
    "Action",
    "AsyncSummarizer",
    "CancelEvent",
    "CompactResult",
    "CompactionEvent",
    "CompactionPlan",
    "CutParams",
    "Hold",
    "Latest",
    "NothingToFold",
    "Outcome",
    "Policy",
    "Snipped",
    "Summarizer",
    "SummaryCancelled",
    "SummaryText",
    "UnusableSummary",
    "apply_summary",
    "attach_blocks",
    "compact",
    "compact_async",
    "decide",
    "find_cut_index",
    "fold_bounds",
    "growth_until_landing",
    "has_text",
    "hold_after",
    "keep_tokens",
    "land_rebased",
    "lands_now",
    "plan_compaction",
    "prefix_change",
    "prompt_messages",
    "rebase",
    "received",
    "snip",
    "structural_summary",
    "summarize",
    "summarize_async",
    "summary_id",
]
