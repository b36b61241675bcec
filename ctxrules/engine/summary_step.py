"""The background compaction step of a turn: read a finished summary, land it, wait, or start one.

Only at the emergency threshold does a turn wait for a summary; otherwise it is served on
the current commit while the summary is written (`ctxrules.engine.background`). What to
fold and whether a result is stale is decided by the pure `ctxrules.compaction.background`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import attrs

from ctxrules.commit import ContextCommit
from ctxrules.compaction import (
    Action,
    CompactResult,
    NothingToFold,
    decide,
    growth_until_landing,
    hold_after,
    land_rebased,
    lands_now,
    plan_compaction,
    received,
)
from ctxrules.compaction.background import STARTS
from ctxrules.engine.background import Job
from ctxrules.engine.notices import compaction_notes, outcome_step
from ctxrules.render import count_messages
from ctxrules.rules import Facts
from ctxrules.rules.batching import BatchReason, last_batch
from ctxrules.tokens import BudgetAllocation

if TYPE_CHECKING:
    from ctxrules.engine.default import DefaultContextEngine


@attrs.define
class Turn:
    """What the step needs of the turn being prepared, and what it adds to it."""

    session_id: str
    window: int
    now: float
    fixed: int
    serves: int
    path: list[str]
    notes: list[str]

    def facts(self, engine: DefaultContextEngine) -> Facts:
        """The facts a compaction of this turn runs with."""
        return Facts(
            now=self.now, context_window=self.window, budget=self.serves, tokenizer=engine.tokenizer
        )


def _emit(engine: DefaultContextEngine, name: str, turn: Turn, job: Job, **data: object) -> None:
    if engine.on_event is not None:
        engine.on_event(
            f"summary_{name}",
            {
                "session_id": turn.session_id,
                "base_commit_id": job.plan.base_commit_id,
                "started_head": job.started_head,
                "summarised_count": job.plan.summarised_count,
                **data,
            },
        )


def is_cold(before: ContextCommit | None, commit: ContextCommit) -> bool:
    """Whether ``commit`` is a batch point of a cold cache (the whole request is rewritten anyway)."""
    if before is None or commit is before:
        return False
    count, why = last_batch(commit)
    return why is BatchReason.COLD and count != last_batch(before)[0]


def _read(engine: DefaultContextEngine, turn: Turn, job: Job, *, waited: float = 0.0) -> None:
    """Take the call's outcome if it is in (or overdue): the summary, or the fallback."""
    if job.ready is not None:
        return
    timeout = engine.summarizer_timeout
    done = job.pending.poll(turn.now) if not waited else job.pending.wait(turn.now, waited)
    if done:
        outcome = job.pending.outcome()
    elif timeout is not None and job.pending.elapsed(turn.now) >= timeout:
        job.pending.cancel()
        outcome = TimeoutError(f"the background summarizer took longer than timeout={timeout}s")
    else:
        return
    job.ready = received(job.plan, outcome)
    if not job.ready.fell_back_to_structural and isinstance(outcome, str):
        # Paid whether it lands or not: the prompt and the text, by the one ruler.
        paid = (count_messages(job.plan.prompt, engine.tokenizer), engine.tokenizer.count(outcome))
        state = engine.states[turn.session_id]
        engine.states[turn.session_id] = attrs.evolve(
            state, usage=state.usage.record_summary(*paid)
        )
    failed = job.ready.fell_back_to_structural
    turn.path.append("summary:failed" if failed else "summary:finished")
    _emit(engine, "failed" if failed else "finished", turn, job, error=job.ready.error)


def _land(
    engine: DefaultContextEngine, turn: Turn, job: Job, commit: ContextCommit
) -> CompactResult | None:
    """Land the job's summary on ``commit``; None (and the job dropped) when it no longer fits."""
    assert job.ready is not None  # noqa: S101 - only a read job lands
    facts = turn.facts(engine)
    result = land_rebased(
        job.plan, job.ready, base=job.base, latest=commit, facts=facts, fixed_tokens=turn.fixed
    )
    engine.jobs.pop(turn.session_id, None)
    if not result.applied:
        turn.path.append(f"summary:dropped:{result.reason}")
        _emit(engine, "dropped", turn, job, reason=result.reason, error=result.error)
        return None
    result = engine.landed(turn.session_id, commit, result, facts)
    turn.path.append(outcome_step(result))
    turn.notes.extend(compaction_notes(result))
    turn.path.append("summary:applied")
    _emit(
        engine,
        "applied",
        turn,
        job,
        head=commit.head_node_id,
        summary_id=result.summary_id,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        fallback=result.fell_back_to_structural,
    )
    return result


def _wait(engine: DefaultContextEngine, turn: Turn, commit: ContextCommit) -> CompactResult | None:
    """At the emergency threshold: wait for the running summary (within the timeout), else compact now."""
    turn.path.append("summary:waited")
    job = engine.jobs.get(turn.session_id)
    broken = None
    if job is not None:
        timeout = engine.summarizer_timeout
        left = math.inf if timeout is None else timeout - job.pending.elapsed(turn.now)
        _read(engine, turn, job, waited=max(left, 0.0) if left != math.inf else 3600.0)
        if job.ready is None:
            job.pending.cancel()
            engine.jobs.pop(turn.session_id, None)
            broken = f"the background summary did not finish within timeout={timeout}s"
            turn.path.append("summary:failed")
            _emit(engine, "failed", turn, job, error=broken)
        else:
            landed = _land(engine, turn, job, commit)
            if landed is not None:
                return landed
            broken = job.ready.error
    # Nothing landed: a blocking compaction, with the structural summary if the summarizer
    # has just failed (a second full timeout would wait twice).
    return engine.compact_now(turn, commit, broken)


def _regrowth(engine: DefaultContextEngine, budget: BudgetAllocation) -> int:
    """Tokens the history grows by before a session planned in vain plans again (`Policy.regrow_pct`)."""
    return max(math.ceil(engine.policy.regrow_pct * max(budget.input_budget, 0)), 1)


def _start(
    engine: DefaultContextEngine,
    turn: Turn,
    commit: ContextCommit,
    budget: BudgetAllocation,
    action: Action,
) -> None:
    hold = engine.start_holds.get(turn.session_id)
    if action is Action.RECOMMEND and hold is not None and commit.total_tokens < hold:
        # Over the compact threshold a blocking engine would compact now: no hold then.
        return
    # Tightening held back since the last batch point lands before any summary would: the
    # summary is planned on the history as it will be then, and not at all if that is
    # under the recommend threshold (it often is, after a long run of tool calls).
    state = engine.states[turn.session_id]
    facts = attrs.evolve(turn.facts(engine), budget=None, cited=state.references.cited)
    settled = engine.settle_budget(turn.session_id, commit, facts)
    after = engine.allocate(turn.window, budget.system, settled.total_tokens, budget.tools_schema)
    if action is Action.RECOMMEND and decide(after, engine.policy) not in STARTS:
        engine.start_holds[turn.session_id] = commit.total_tokens + _regrowth(engine, budget)
        turn.path.append("summary:not_needed_once_settled")
        return
    ahead = growth_until_landing(after, engine.policy)
    plan = plan_compaction(
        settled,
        turn.window,
        engine.cut,
        fixed_tokens=turn.fixed,
        budget=turn.serves,
        ahead=ahead,
    )
    if isinstance(plan, NothingToFold):
        # Planning walks the history: not again on every turn, only after it has grown.
        engine.start_holds[turn.session_id] = commit.total_tokens + _regrowth(engine, budget)
        turn.path.append(f"summary:{plan.reason}")
        return
    engine.start_holds.pop(turn.session_id, None)
    pending = engine.background_runner().start(engine.summarizer, plan.prompt, turn.now)
    job = Job(plan, settled, pending, commit.head_node_id)
    engine.jobs[turn.session_id] = job
    turn.path.append("summary:started")
    _emit(engine, "started", turn, job, head=commit.head_node_id, tokens_before=plan.tokens_before)


def background_step(
    engine: DefaultContextEngine,
    turn: Turn,
    commit: ContextCommit,
    *,
    before: ContextCommit | None,
    action: Action,
    budget: BudgetAllocation,
) -> ContextCommit:
    """The commit to send this turn: ``commit``, or it with a background summary landed."""
    job = engine.jobs.get(turn.session_id)
    if job is not None:
        _read(engine, turn, job)
    landed: CompactResult | None = None
    if (
        job is not None
        and job.ready is not None
        and lands_now(action, cold=is_cold(before, commit))
    ):
        landed = _land(engine, turn, job, commit)
    if landed is None and action is Action.EMERGENCY:
        landed = _wait(engine, turn, commit)
    if landed is not None:
        commit = landed.commit
        budget = engine.allocate(
            turn.window, budget.system, commit.total_tokens, budget.tools_schema
        )
        state = engine.states[turn.session_id]
        engine.states[turn.session_id] = attrs.evolve(state, hold=hold_after(budget, engine.policy))
        # The next summary starts once the history has grown again: right after a landing
        # that left it over the recommend threshold, it would fold next to nothing.
        engine.start_holds[turn.session_id] = commit.total_tokens + _regrowth(engine, budget)
        action = engine.decide(budget, turn.session_id)
    if turn.session_id not in engine.jobs and action in STARTS:
        _start(engine, turn, commit, budget, action)
    return commit
