"""Compaction off the hot path, the pure part: when a background summary starts and lands.

The summary is written while the session goes on (reference 003 ⑪): the engine plans the
fold at the recommend threshold, keeps serving the current commit, and lands the summary
at a later batch point only if the prefix it folds is still there, unchanged. Where the
summarizer runs (a thread, a task, a simulated clock) is the engine's business.
"""

from __future__ import annotations

import math

import attrs

from ctxrules.commit import ContextCommit, State
from ctxrules.compaction.plan import CompactionPlan
from ctxrules.compaction.policy import Action, Policy
from ctxrules.tokens.budget import BudgetAllocation

#: The actions at which a background summary is started, when none is under way.
STARTS = frozenset({Action.RECOMMEND, Action.COMPACT, Action.EMERGENCY})
#: The actions at which a finished summary lands (the ones a blocking engine compacts at).
LANDS = frozenset({Action.COMPACT, Action.EMERGENCY})


def lands_now(action: Action, *, cold: bool) -> bool:
    """Whether a finished summary lands on this turn: at the compact threshold, or when cold.

    A cold turn (the provider's cache expired) over the recommend threshold rewrites the
    whole request anyway, so the summary's prefix break costs nothing extra there; under
    it the summary is not needed yet.

    >>> lands_now(Action.RECOMMEND, cold=False), lands_now(Action.RECOMMEND, cold=True)
    (False, True)
    >>> lands_now(Action.COMPACT, cold=False), lands_now(Action.NONE, cold=True)
    (True, False)
    """
    return action in LANDS or (cold and action is Action.RECOMMEND)


def growth_until_landing(budget: BudgetAllocation, policy: Policy) -> int:
    """Tokens the input may still grow by before it reaches the compact threshold.

    A summary planned now lands about then, so its fold leaves that much less tail.

    >>> from ctxrules.tokens.budget import allocate
    >>> growth_until_landing(allocate(32_000, 0, 11_200, 0), Policy())
    1600
    """
    threshold = policy.auto_pct
    if threshold is None:
        return 0
    return max(math.ceil(threshold * budget.input_budget) - budget.input_used, 0)


def _summary_id(commit: ContextCommit) -> str | None:
    at = commit.summary_at
    return commit.items[at].source_node_id if at >= 0 else None


def prefix_change(plan: CompactionPlan, base: ContextCommit, latest: ContextCommit) -> str | None:
    """Why the prefix ``plan`` folds (planned on ``base``) is not in ``latest`` as it was; None if it is.

    The guard is the folded items themselves (ids, at the same positions, none locked or
    folded since) and the active summary: appending new turns keeps the plan valid, while
    an edit, a checkout to another branch or another compaction makes it stale.
    """
    if latest.id == plan.base_commit_id:
        return None
    if _summary_id(latest) != _summary_id(base):
        return "another summary is active"
    if plan.positions[-1] >= len(latest.items):
        return "the history is shorter than the folded prefix"
    for position in plan.positions:
        old, new = base.items[position], latest.items[position]
        if old.source_node_id != new.source_node_id:
            return f"item {position} is {new.source_node_id}, not {old.source_node_id}"
        if new.locked or (new.state is State.SUMMARIZED and old.state is not State.SUMMARIZED):
            return f"item {new.source_node_id} is locked or folded since"
    return None


def rebase(
    plan: CompactionPlan, base: ContextCommit, latest: ContextCommit, *, fixed_tokens: int = 0
) -> CompactionPlan | str:
    """``plan`` moved onto ``latest`` (the same fold, ``latest``'s tokens), or why it is stale.

    >>> from ctxrules.commit import ContextItem
    >>> from ctxrules.compaction.prompts import prompt_messages
    >>> base = ContextCommit("s").append_items([ContextItem("n1", "user", rendered="hi", tokens=3)])
    >>> plan = CompactionPlan(base.id, None, (0,), 1, (), None, prompt_messages(""), 3)
    >>> later = base.append_items([ContextItem("n2", "assistant", rendered="ok", tokens=2)])
    >>> rebase(plan, base, later).base_commit_id == later.id
    True
    >>> rebase(plan, base, ContextCommit("s").append_items([ContextItem("n9", "user")]))
    'item 0 is n9, not n1'
    """
    why = prefix_change(plan, base, latest)
    if why is not None:
        return why
    return attrs.evolve(
        plan,
        base_commit_id=latest.id,
        head_node_id=latest.head_node_id,
        tokens_before=latest.total_tokens + fixed_tokens,
    )
