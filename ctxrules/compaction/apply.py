"""Applying a summary, purely: one summary item in, the folded items summarized, or nothing."""

from __future__ import annotations

import attrs

from ctxrules.canonical import content_hash
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.layout import covered
from ctxrules.compaction.in_use import NAMES_LINE_CHARS, names_line, without_names_line, written
from ctxrules.compaction.outcome import (
    CompactionEvent,
    CompactResult,
    Outcome,
    failed,
    started,
)
from ctxrules.compaction.plan import CompactionPlan, label
from ctxrules.compaction.summarizer import SummaryText, fallback
from ctxrules.dag import Role
from ctxrules.render import counted
from ctxrules.rules import Facts
from ctxrules.rules.artifacts import (
    FILES_LINE_CHARS,
    files_in_line,
    files_line,
    without_files_line,
    written_paths,
)
from ctxrules.rules.batching import BATCH_COUNT, marks_before
from ctxrules.rules.handles import folds_line, handle_source, without_folds_lines
from ctxrules.rules.scale import scaled, window_scale
from ctxrules.rules.tighten import evolved

#: The prefix of every summary item's id; no DAG node ever carries it (invariant 5).
SUMMARY_ID_PREFIX = "sm_"
#: The ``reason`` of a summary item and of the items folded into it.
COMPACTED = "compacted"
#: The tokens of a summarized item: it renders no message (`ctxrules.render.render_item`).
SUMMARIZED_TOKENS = 0
#: The input budget under which a summary's trail line shrinks with the window, as the
#: fold's kept tail does (`CutParams.scale_below`).
TRAIL_SCALE_BELOW = 16_000


def summary_id(plan: CompactionPlan, base: ContextCommit, text: str) -> str:
    """``sm_`` plus a hash of the folded items' ids and the summary text: deterministic.

    >>> from ctxrules.compaction.prompts import prompt_messages
    >>> base = ContextCommit("s").append_items([ContextItem("n1", "user")])
    >>> summary_id(CompactionPlan(base.id, None, (0,), 1, (), None, prompt_messages(""), 0), base, "hi")[:3]
    'sm_'
    """
    folded = [base.items[p].source_node_id for p in plan.positions]
    return SUMMARY_ID_PREFIX + content_hash({"folded": folded, "summary": text})[:24]


def trail_chars(facts: Facts) -> int:
    """Characters of paths a summary's trail line names at the facts' window.

    Every summary carries the trail, so at a small window a fixed 2,000 characters (some
    700 tokens of paths) would sit in every request after a fold: below an input budget of
    `TRAIL_SCALE_BELOW` it shrinks in proportion (half at 16k, a quarter at 8k).

    >>> [trail_chars(Facts(context_window=w)) for w in (8_000, 16_000, 32_000, 200_000)]
    [500, 1000, 2000, 2000]
    """
    return scaled(FILES_LINE_CHARS, window_scale(facts, TRAIL_SCALE_BELOW))


def in_use_chars(facts: Facts) -> int:
    """Characters of names a summary's names-in-use line holds at the facts' window.

    >>> [in_use_chars(Facts(context_window=w)) for w in (8_000, 32_000, 200_000)]
    [500, 2000, 2000]
    """
    return scaled(NAMES_LINE_CHARS, window_scale(facts, TRAIL_SCALE_BELOW))


def with_folds(
    plan: CompactionPlan,
    base: ContextCommit,
    text: str,
    *,
    trail: int = FILES_LINE_CHARS,
    in_use: int = 0,
) -> str:
    """The summary text followed by the line naming the handles of what it folds.

    A previous summary's own folds line (carried whole by the structural summary) is
    dropped: this line names that summary, whose text still holds it. Before it, a line
    names the files the folded calls (and any earlier summary) wrote: the artifact trail,
    at most ``trail`` characters of paths; before that, with ``in_use``, up to that many
    characters of the names the folded assistant messages and calls wrote
    (`ctxrules.compaction.in_use`) that the summary does not already show.
    """
    folded = [base.items[p] for p in plan.positions]
    groups = [(label(item), handle_source(item)) for item in folded]
    body = without_names_line(without_files_line(without_folds_lines(text))).rstrip("\n")
    trail_line = files_line(_written(folded), trail)
    # The names line leaves out what the trail line after it already names (a path the
    # agent wrote and went on citing): its room goes to names nothing else shows.
    shown = f"{body}\n{trail_line}"
    used_line = names_line(written(folded), in_use, shown=shown) if in_use else ""
    body = f"{body}\n{used_line}" if used_line else body
    body = f"{body}\n{trail_line}" if trail_line else body
    return f"{body}\n{folds_line(groups, [item.source_node_id for item in folded])}"


def _written(folded: list[ContextItem]) -> list[str]:
    """The files the folded items wrote, an earlier summary's trail first: the artifact trail."""
    paths: list[str] = []
    for item in folded:
        if item.state is State.SUMMARY:
            paths.extend(files_in_line(item.rendered))
        elif item.is_tool:
            paths.extend(written_paths(item.tool_name, item.arguments))
    return paths


def summary_slot(plan: CompactionPlan, base: ContextCommit) -> int:
    """Where the summary item goes: where the folded run began, past a previous summary it folds.

    A previous summary sits where the first compaction began, near the start of the
    history; every position between it and the run folded now is summarized. The new
    summary goes at the run, with nothing in view between the two places, so the request
    is the same and only the run and what follows it move (not the whole history).
    """
    positions = plan.positions
    later = len(positions) > 1 and base.items[positions[0]].state is State.SUMMARY
    if later and covered(base.hidden or (), positions[0] + 1, positions[1]):
        return positions[1]
    return positions[0]


def _fold(plan: CompactionPlan, base: ContextCommit, text: str, facts: Facts) -> ContextCommit:
    """The base with the summary item inserted at its slot (`summary_slot`) and the run summarized.

    The items from the slot on move by one, and only they are rebuilt (`with_items_from`).
    Each rule's mark is kept up to the slot (`marks_before`): before it the fold only
    summarized items, so a rule goes on from where it was rather than reading the whole
    history again.
    """
    text = with_folds(plan, base, text, trail=trail_chars(facts), in_use=in_use_chars(facts))
    sid = summary_id(plan, base, text)
    first = base.items[plan.insert_at]
    summary = counted(
        ContextItem(
            sid,
            Role.ASSISTANT,
            state=State.SUMMARY,
            rendered=text,
            reason=COMPACTED,
            turn=first.turn,
            created_at=first.created_at,
            changed_at=facts.now,
        ),
        facts.tokenizer,
    )
    slot = summary_slot(plan, base)
    before: dict[int, ContextItem] = {}
    after = list(base.items[slot:])
    for position in plan.positions:
        folded = _summarized(base.items[position], sid, facts)
        if position < slot:
            before[position] = folded
        else:
            after[position - slot] = folded
    commit = base.replace_items(before).with_items_from(slot, [summary, *after])
    commit = attrs.evolve(commit, marks=marks_before(base.marks, slot))
    if BATCH_COUNT in base.marks:
        # The batch count only grows: reset by the new item list, two compactions in a row
        # would read as no batch point between them (invariant 15).
        commit = commit.with_mark(BATCH_COUNT, base.marks[BATCH_COUNT])
    return attrs.evolve(commit, parent_ids=(base.id,), created_at=facts.now)


def _summarized(item: ContextItem, sid: str, facts: Facts) -> ContextItem:
    """``item`` folded into the summary ``sid``: what `tighten` to summarized, then merged, gives.

    A summarized item renders nothing, so it counts no tokens: built in one step, without
    rendering and counting each of the thousand items a fold takes (or the two copies
    `tighten` would make of each).
    """
    if item.locked or not item.state.may_become(State.SUMMARIZED):
        msg = f"item {item.source_node_id!r} cannot be summarized (locked?)"
        raise ValueError(msg)
    changed_at = facts.now if item.state is not State.SUMMARIZED else item.changed_at
    return evolved(
        item,
        state=State.SUMMARIZED,
        tokens=SUMMARIZED_TOKENS,
        reason=COMPACTED,
        changed_at=changed_at,
        merged_into=sid,
    )


def apply_summary(
    plan: CompactionPlan,
    summary: SummaryText,
    latest: ContextCommit,
    facts: Facts,
    *,
    fixed_tokens: int = 0,
) -> CompactResult:
    """Land ``summary`` on ``latest`` if it is still the commit the plan was made against.

    A newer commit makes the result ``stale``; a summary that saves no tokens is replaced by
    the structural one, and if that saves none either the compaction fails with ``no_gain``.
    """
    count = plan.summarised_count
    opening = started(plan.base_commit_id, count, plan.tokens_before)
    if latest.id != plan.base_commit_id:
        error = f"planned against {plan.base_commit_id}, the latest commit is {latest.id}"
        return failed(
            latest,
            plan.base_commit_id,
            opening,
            reason="stale",
            error=error,
            fixed_tokens=fixed_tokens,
        )
    candidates = [summary]
    if not summary.fell_back_to_structural:
        candidates.append(fallback(plan, "the summary did not reduce the tokens in use"))
    for candidate in candidates:
        commit = _fold(plan, latest, candidate.text, facts)
        after = commit.total_tokens + fixed_tokens
        if after < plan.tokens_before:
            sid = commit.items[summary_slot(plan, latest)].source_node_id
            done = CompactionEvent(
                Outcome.FINISHED,
                plan.base_commit_id,
                count,
                plan.tokens_before,
                after,
                error=candidate.error,
            )
            return CompactResult(
                Outcome.FINISHED,
                commit,
                plan.base_commit_id,
                (opening, done),
                plan.tokens_before,
                after,
                summarised_count=count,
                summary_id=sid,
                fell_back_to_structural=candidate.fell_back_to_structural,
                error=candidate.error,
                fixed_tokens=fixed_tokens,
            )
    error = f"no summary is smaller than the {count} items it would replace"
    return failed(
        latest,
        plan.base_commit_id,
        opening,
        reason="no_gain",
        error=error,
        fixed_tokens=fixed_tokens,
    )
