"""The pure part of background compaction: the rebase guard, and landing on a newer commit."""

from __future__ import annotations

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrules.check import one_summary
from ctxrules.check.compaction import honest_outcome, kept_in_order
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.compaction import (
    CompactionPlan,
    Outcome,
    SummaryText,
    apply_summary,
    land_rebased,
    plan_compaction,
    rebase,
)
from ctxrules.rules import Facts
from ctxrules.rules.batching import BATCH_COUNT, last_batch
from ctxrules.testing.compaction import cut_views
from ctxrules.tokens import HeuristicCounter

WINDOW = 8_000
FACTS = Facts(now=5.0, context_window=WINDOW, tokenizer=HeuristicCounter())
#: Each example plans and lands a fold over a whole view: a few dozen cover the cases.
SOME = settings(max_examples=min(settings.default.max_examples, 60))


def _renamed(items: list[ContextItem], prefix: str) -> list[ContextItem]:
    return [attrs.evolve(item, source_node_id=f"{prefix}{item.source_node_id}") for item in items]


@SOME
@given(cut_views(max_units=30), cut_views(max_units=8), st.text(min_size=1, max_size=40))
def test_a_plan_lands_on_any_commit_that_only_grew(
    old: list[ContextItem], new: list[ContextItem], text: str
) -> None:
    """Invariants 3, 4, 12, 13, 14: a summary planned on a commit lands on it plus new turns."""
    base = ContextCommit("s").append_items(old)
    plan = plan_compaction(base, WINDOW)
    if not isinstance(plan, CompactionPlan):
        return
    latest = base.append_items(_renamed(new, "later_"))
    moved = rebase(plan, base, latest)
    assert isinstance(moved, CompactionPlan)
    assert moved.positions == plan.positions
    result = land_rebased(plan, SummaryText("s: " + text), base=base, latest=latest, facts=FACTS)
    assert result.outcome in (Outcome.FINISHED, Outcome.FAILED)
    assert result.reason != "stale"
    assert honest_outcome(result, 1) == []
    assert one_summary(result.commit) == []
    if result.outcome is Outcome.FINISHED:
        assert kept_in_order(latest, result.commit, result.summary_id) == []


@SOME
@given(cut_views(max_units=30), st.data())
def test_a_plan_whose_folded_prefix_changed_is_stale(
    old: list[ContextItem], data: st.DataObject
) -> None:
    """Another item where a folded one was (an edit, another branch): stale, the latest commit unchanged."""
    base = ContextCommit("s").append_items(old)
    plan = plan_compaction(base, WINDOW)
    if not isinstance(plan, CompactionPlan):
        return
    at = data.draw(st.sampled_from(plan.positions))
    items = list(base.items)
    items[at] = attrs.evolve(items[at], source_node_id="edited")
    latest = ContextCommit("s").append_items(items)
    assert isinstance(rebase(plan, base, latest), str)
    result = land_rebased(plan, SummaryText("summary"), base=base, latest=latest, facts=FACTS)
    assert (result.outcome, result.reason, result.commit) == (Outcome.FAILED, "stale", latest)


def test_a_fold_keeps_the_batch_count() -> None:
    """Regression: a fold reset the batch count, so two compactions in a row read as no batch point."""
    items = [
        ContextItem(f"n{i}", "user" if i % 2 == 0 else "assistant", rendered="x " * 300, tokens=300)
        for i in range(40)
    ]
    base = ContextCommit("s").append_items(items).with_mark(BATCH_COUNT, 7)
    plan = plan_compaction(base, WINDOW)
    assert isinstance(plan, CompactionPlan)
    result = apply_summary(plan, SummaryText("short"), base, FACTS)
    assert result.outcome is Outcome.FINISHED
    assert last_batch(result.commit)[0] == 7
