"""`DefaultContextEngine`: the lifecycle hooks of `ContextEngine` wired to components.

Each component (pipeline, summarizer, tokenizer, budget, policy, store) is given by
keyword, so one can be swapped without subclassing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs
from immutables import Map
from returns.result import Failure, Result, Success

from ctxrules.cache import CacheProfile
from ctxrules.commit import ContextCommit
from ctxrules.commit.pins import apply_pins
from ctxrules.compaction import (
    CompactResult,
    CutParams,
    Policy,
    Summarizer,
    compact,
    decide,
    hold_after,
    snip,
)
from ctxrules.compaction.occupancy import Measurement
from ctxrules.compaction.policy import Action
from ctxrules.dag import Session
from ctxrules.engine.background import Job, Runner
from ctxrules.engine.contract import ContextEngine, EngineError, UsageStore
from ctxrules.engine.head_commit import head_commit
from ctxrules.engine.notices import (
    OnEvent,
    compaction_notes,
    emit_compaction,
    outcome_step,
    request_note,
    snip_note,
    window_problem,
)
from ctxrules.engine.observer import Observer
from ctxrules.engine.rescue import RescueState, refusal_from_error
from ctxrules.engine.summary_step import Turn, background_step
from ctxrules.engine.turn import SessionState, TurnPrep, turn_prep
from ctxrules.render import Message, TextBlock, count_messages, pinned_messages, render_commit
from ctxrules.render.system_prompt import AgentProfile, build_system_prompt
from ctxrules.rules import Facts, Pipeline, ReferenceTracker
from ctxrules.rules.batching import BatchReason, last_batch, stable_items
from ctxrules.rules.receipts import ending_with, receipt
from ctxrules.telemetry import default_observer
from ctxrules.tokens import (
    BudgetAllocation,
    Tokenizer,
    allocate,
    default_tokenizer,
    tools_schema_tokens,
)
from ctxrules.tokens.memo import memoized
from ctxrules.tokens.usage import ProviderUsage, UsageState


def _default_summarizer(_: tuple[Message, ...]) -> str:
    # No model configured: compaction falls back to the deterministic structural summary.
    raise RuntimeError("no summarizer configured")


class DefaultContextEngine(ContextEngine):
    """The default engine; every component is a keyword argument (001 §5.2).

    ``cache_profile``, the provider's prompt cache when known, sets the batching policy's
    cold trigger to the cache's lifetime: a gap that long means the cache has expired.
    ``background`` (a `Runner`: threads, loop tasks, or a replay's simulated clock) writes
    summaries off the hot path: started at the recommend threshold, landed at a later batch
    point, waited for only at the emergency threshold. None compacts in the turn.
    """

    name = "default"

    def __init__(
        self,
        *,
        pipeline: Pipeline | None = None,
        summarizer: Summarizer = _default_summarizer,
        tokenizer: Tokenizer | None = None,
        budget_allocator: Callable[..., BudgetAllocation] = allocate,
        policy: Policy | None = None,
        cut: CutParams | None = None,
        store: UsageStore | None = None,
        summarizer_timeout: float | None = 60.0,
        auto_compact: bool = True,
        usage_tracker: UsageState | None = None,
        reference_tracker: ReferenceTracker | None = None,
        on_event: OnEvent | None = None,
        cache_profile: CacheProfile | None = None,
        background: Runner | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.pipeline = pipeline or Pipeline()
        if cache_profile is not None and self.pipeline.batching is not None:
            batching = self.pipeline.batching.with_cache_ttl(cache_profile.ttl_seconds)
            self.pipeline = attrs.evolve(self.pipeline, batching=batching)
        self.summarizer = summarizer
        # A session counts the same texts again (tool names, an item at arrival and after a
        # replay's naive resend): the memo turns each repeat into a lookup.
        self.tokenizer = memoized(tokenizer or default_tokenizer())
        self.allocate = budget_allocator
        self.policy = policy or Policy()
        self.cut = cut or CutParams()
        self.store = store
        self.summarizer_timeout = summarizer_timeout
        self.auto_compact = auto_compact
        # The trackers every new session starts from (a pre-seeded index, saved usage).
        self.usage_tracker = usage_tracker or UsageState()
        self.reference_tracker = reference_tracker or ReferenceTracker()
        self.on_event = on_event
        # Spans of every decision once the application configures an OpenTelemetry tracer
        # provider; None (or an observer that checks one flag) otherwise.
        self.observer: Observer | None = observer or default_observer()
        self.states: dict[str, SessionState] = {}
        self.background = background
        # The shell's side of background compaction: one summary under way per session, and
        # the history size below which a session with nothing to fold does not plan again.
        self.jobs: dict[str, Job] = {}
        self.start_holds: dict[str, int] = {}
        # The last budget settle per session: its commit, facts and result (`settle_budget`).
        self._settles: dict[str, tuple[ContextCommit, Facts, ContextCommit]] = {}

    # -- lifecycle -------------------------------------------------------------------------

    def on_session_start(self, session_id: str) -> None:
        """Start from the persisted usage, if the store has it (marked ``cached``: not measured now)."""
        usage = self.store.load_usage(session_id) if self.store is not None else None
        self.states[session_id] = SessionState(
            usage=usage.as_cached() if usage is not None else self.usage_tracker,
            references=self.reference_tracker,
        )

    def on_session_end(self, session_id: str) -> None:
        """Cancel its background summary, flush usage to the store and forget the session."""
        self.cancel_background(session_id)
        state = self.states.pop(session_id, None)
        if state is not None and self.store is not None:
            self.store.save_usage(session_id, state.usage)

    def cancel_background(self, session_id: str | None = None) -> None:
        """Cancel the background summary of a session (of every session with None); it never lands."""
        for sid in [session_id] if session_id is not None else list(self.jobs):
            job = self.jobs.pop(sid, None) if sid is not None else None
            if job is not None:
                job.pending.cancel()
            self.start_holds.pop(sid or "", None)

    def close(self) -> None:
        """Cancel every background summary (the engine's sessions stay as they are)."""
        self.cancel_background()

    def _state(self, session_id: str) -> SessionState:
        if session_id not in self.states:
            self.on_session_start(session_id)
        return self.states[session_id]

    def _noted(
        self, session_id: str, commit: ContextCommit, system: tuple[str, int], *, on: bool
    ) -> tuple[str, int]:
        """The system text (and its tokens) with the commit's receipt at its end, and the tokens that adds."""
        text, tokens = system
        note = self._receipt(session_id, commit) if on else ""
        if not note:
            return text, 0
        noted = ending_with(text, note)
        return noted, self._system_tokens(noted) - tokens

    def _system_tokens(self, text: str) -> int:
        if not text:
            return 0
        return count_messages((Message("system", (TextBlock(text),)),), self.tokenizer)

    def _receipt(self, session_id: str, commit: ContextCommit) -> str:
        """The receipt of the commit's stable prefix: it changes at batch points only."""
        state = self._state(session_id)
        batched = self.pipeline.batching is not None
        key: object = (last_batch(commit)[0], stable_items(commit)) if batched else commit.id
        if state.receipt[0] != key:
            items = commit.items
            shown = items[: stable_items(commit)] if batched else items
            self.states[session_id] = attrs.evolve(state, receipt=(key, receipt(shown)))
        return self._state(session_id).receipt[1]

    def pin(self, session_id: str, node_id: str, *, pinned: bool = True) -> None:
        """Pin (or unpin) the node's item from the session's next request on (invariant 17)."""
        state = self._state(session_id)
        self.states[session_id] = attrs.evolve(state, pins=state.pins.set(node_id, pinned))

    # -- prepare ---------------------------------------------------------------------------

    def prepare(  # type: ignore[override]
        self,
        session: Session,
        *,
        window: int,
        now: float = 0.0,
        agent: AgentProfile | None = None,
        tools: Sequence[Mapping[str, object]] = (),
        prompt_too_long: bool | str = False,
        sources: Mapping[str, ContextCommit] | None = None,
        system_prompt: str | None = None,
        receipts: bool = False,
    ) -> Result[TurnPrep, EngineError]:
        """Build the commit for the head, compact or snip as the policy says, and render.

        With ``receipts`` the system text ends with a line saying what the request shows
        shortened and how to recall it (`ctxrules.rules.receipts`), renewed at batch points.

        ``prompt_too_long`` (True, or the provider's error text, whose stated limit is then
        used) reports that the provider refused the last request as too long: the engine
        compacts and snips to a cap below that request, and keeps the cap for the session.
        ``system_prompt`` is a system text used as it is, instead of one built from ``agent``.
        """
        if session.head is None:
            return Failure(EngineError(session.session_id, "the session has no head to prepare"))
        if problem := window_problem(window):
            return Failure(EngineError(session.session_id, problem))
        path: list[str] = []
        system = build_system_prompt(agent) if agent is not None else None
        system_text = system.text if system is not None else (system_prompt or "")
        system_tokens = self._system_tokens(system_text)
        tools_tokens = tools_schema_tokens(tools, self.tokenizer)
        fixed = system_tokens + tools_tokens
        commit, before, state = head_commit(
            self._state(session.session_id),
            session,
            self.pipeline,
            Facts(now=now, context_window=window, tokenizer=self.tokenizer),
            sources,
        )
        path.append("reuse_commit" if commit is before else "generate_commit")
        commit, state, pin_notes = _pinned(commit, state, session.head)
        self.states[session.session_id] = state
        if commit is not before:
            commit = self._budget_point(session.session_id, before, commit, window, now, fixed)
        budget = self.allocate(window, system_tokens, commit.total_tokens, tools_tokens)
        action = decide(budget, self.policy, self._state(session.session_id).hold)
        path.append(f"decide:{action.value}")
        notes: list[str] = list(pin_notes)
        rescue = self._refused(session.session_id, prompt_too_long, commit.total_tokens + fixed)
        if rescue.cap is not None:
            path.append(f"rescue:cap={rescue.cap}")
        serves = budget.input_budget if rescue.cap is None else min(budget.input_budget, rescue.cap)
        # Over a refusal's cap, fold history rather than only snip it turn after turn.
        over_cap = rescue.cap is not None and commit.total_tokens + fixed > rescue.cap
        forced = bool(prompt_too_long) or over_cap
        turn = Turn(session.session_id, window, now, fixed, serves, path, notes)
        commit = self._compaction(turn, commit, before, action, budget, forced=forced)
        system_text, extra = self._noted(
            session.session_id, commit, (system_text, system_tokens), on=receipts
        )
        fixed, system_tokens = fixed + extra, system_tokens + extra
        budget = self.allocate(window, system_tokens, commit.total_tokens, tools_tokens)
        messages: tuple[Message, ...] = render_commit(commit)
        limit = serves - fixed
        request = commit.total_tokens
        if request > limit or prompt_too_long:
            snipped = snip(messages, max(limit, 0), self.tokenizer, keep=pinned_messages(messages))
            path.append(f"snip:{len(messages)}->{len(snipped.messages)} messages")
            messages, request = snipped.messages, snipped.tokens
            # A cut is never silent: a warning on the turn, and an event for the caller.
            if cut := snip_note(snipped):
                notes.append(cut)
                if self.on_event is not None:
                    self.on_event(
                        "request_snipped", {"session_id": session.session_id, "warning": cut}
                    )
        state = self._state(session.session_id)
        usage = state.usage.sent(window, system_tokens, tools_tokens)
        self.states[session.session_id] = attrs.evolve(
            state, last_request=request + fixed, usage=usage
        )
        notes.extend(n for n in (rescue.note, request_note(request + fixed, serves, fixed)) if n)
        path.append("render")
        prep = turn_prep(
            self._state(session.session_id),
            commit,
            before,
            session_id=session.session_id,
            system=system_text,
            warnings=(*getattr(system, "warnings", ()), *notes),
            messages=messages,
            budget=budget,
            fixed=fixed,
            request=request,
            path=path,
        )
        self._observe(prep, before)
        return Success(prep)

    def _compaction(
        self,
        turn: Turn,
        commit: ContextCommit,
        before: ContextCommit | None,
        action: Action,
        budget: BudgetAllocation,
        *,
        forced: bool,
    ) -> ContextCommit:
        """The commit after this turn's compaction: landed from the background, made now, or none."""
        if self.background is not None and self.auto_compact and not forced:
            return background_step(self, turn, commit, before=before, action=action, budget=budget)
        if not forced and not (self.auto_compact and action in (Action.COMPACT, Action.EMERGENCY)):
            return commit
        args = (turn.session_id, commit, turn.window, turn.now, turn.fixed, turn.path)
        result = self._compact(*args, turn.serves)
        turn.notes.extend(compaction_notes(result))
        if not forced:
            after = self.allocate(
                turn.window, budget.system, result.commit.total_tokens, budget.tools_schema
            )
            state = self._state(turn.session_id)
            self.states[turn.session_id] = attrs.evolve(state, hold=hold_after(after, self.policy))
        return result.commit

    def _observe(self, prep: TurnPrep, before: ContextCommit | None) -> None:
        # The one call site of the observer for a prepared request.
        if self.observer is not None:
            self.observer.prepared(prep, before, self.pipeline.version)

    def _budget_point(  # noqa: PLR0917 - private; the one caller passes all six
        self,
        session_id: str,
        before: ContextCommit | None,
        commit: ContextCommit,
        window: int,
        now: float,
        fixed: int,
    ) -> ContextCommit:
        """``commit``, or it with pending tightening landed when it crosses the budget share.

        Decided on the commit as it would be sent (new results already capped), not on the
        raw originals: a huge result cut to a few thousand characters crosses nothing.
        """
        batching = self.pipeline.batching
        state = self._state(session_id)
        facts = Facts(
            now=now, context_window=window, tokenizer=self.tokenizer, cited=state.references.cited
        )
        batched = before is not None and last_batch(commit)[0] != last_batch(before)[0]
        if batching is None or batched or not batching.crosses_budget(before, commit, facts, fixed):
            return commit
        settled = self.settle_budget(session_id, commit, facts)
        if self.auto_compact and not batching.worth_landing(commit, settled, facts):
            budget = self.allocate(window, fixed, commit.total_tokens, 0)
            if self.decide(budget, session_id) in (Action.COMPACT, Action.EMERGENCY):
                # At a small window a landing that frees little is followed by another within
                # a few turns; the compaction due now settles it and folds (one break).
                return commit
        if self.background is not None and self.auto_compact:
            due = decide(self.allocate(window, fixed, settled.total_tokens, 0), self.policy)
            if due in (Action.COMPACT, Action.EMERGENCY):
                # A summary is due; its landing settles this tightening (one break, not two).
                return commit
        head = commit.head_node_id
        assert head is not None  # noqa: S101 - a generated commit has its head
        self.states[session_id] = attrs.evolve(
            state,
            commits=state.commits.set(head, settled),
            by_id=state.by_id.set(settled.id, settled),
        )
        return settled

    def settle_budget(self, session_id: str, commit: ContextCommit, facts: Facts) -> ContextCommit:
        """`Pipeline.settle` of ``commit`` at a budget point, run once for the same commit and facts.

        A turn that crosses the budget share settles the pending tightening to weigh it;
        when a compaction is due at the same turn, the background summary settles the same
        commit again to plan on it (at 10k messages about a third of that turn's work).
        """
        last = self._settles.get(session_id)
        if last is not None and last[0] is commit and _same_facts(last[1], facts):
            return last[2]
        settled = self.pipeline.settle(commit, facts, BatchReason.BUDGET)
        self._settles[session_id] = (commit, facts, settled)
        return settled

    def _refused(self, session_id: str, prompt_too_long: bool | str, request: int) -> RescueState:
        """The rescue state after this call's report: a refusal caps the request below the last."""
        state = self._state(session_id)
        if not prompt_too_long:
            return state.rescue
        stated = refusal_from_error(prompt_too_long if isinstance(prompt_too_long, str) else "")
        rescue = state.rescue.refused(state.last_request or request, stated)
        self.states[session_id] = attrs.evolve(state, rescue=rescue)
        return rescue

    def _compact(  # noqa: PLR0917 - private; every caller passes all seven
        self,
        session_id: str,
        commit: ContextCommit,
        window: int,
        now: float,
        fixed: int,
        path: list[str],
        budget: int | None = None,
        summarizer: Summarizer | None = None,
    ) -> CompactResult:
        facts = Facts(now=now, context_window=window, budget=budget, tokenizer=self.tokenizer)
        paid: list[tuple[int, int]] = []
        observer = self.observer
        chosen = summarizer or self.summarizer
        metered = self._metered(chosen, paid)
        # No summarizer is no model call: traced, its "no summarizer configured" would be an
        # error span at every compaction of a default setup (the structural summary is used).
        if observer is not None and chosen is not _default_summarizer:
            metered = observer.summarizing(session_id, metered)
        result = compact(
            commit,
            metered,
            facts,
            params=self.cut,
            timeout=self.summarizer_timeout,
            latest=lambda: self._latest(session_id, commit),
            fixed_tokens=fixed,
        )
        path.append(outcome_step(result))
        emit_compaction(self.on_event, session_id, result)
        state = self._state(session_id)
        for prompt_tokens, completion_tokens in paid[:1]:
            state = attrs.evolve(
                state, usage=state.usage.record_summary(prompt_tokens, completion_tokens)
            )
        self.states[session_id] = state
        return self.landed(session_id, commit, result, facts)

    def _metered(self, summarizer: Summarizer, paid: list[tuple[int, int]]) -> Summarizer:
        """``summarizer``, noting the tokens of each call that returns text (a late one too)."""

        def call(prompt: tuple[Message, ...]) -> str:
            text = summarizer(prompt)
            if isinstance(text, str) and text.strip():
                paid.append((count_messages(prompt, self.tokenizer), self.tokenizer.count(text)))
            return text

        return call

    def landed(
        self, session_id: str, commit: ContextCommit, result: CompactResult, facts: Facts
    ) -> CompactResult:
        """``result`` with pending tightening settled on a landed summary, and the session moved on."""
        state = self._state(session_id)
        if result.applied:
            # The prefix breaks anyway: pending tightening lands with it (one break, not two).
            cited = attrs.evolve(facts, cited=state.references.cited)
            settled = self.pipeline.settle(result.commit, cited, BatchReason.COMPACTION)
            shrunk = result.commit.total_tokens - settled.total_tokens
            result = attrs.evolve(result, commit=settled, tokens_after=result.tokens_after - shrunk)
        if result.applied and commit.head_node_id is not None:
            state = attrs.evolve(
                state,
                commits=state.commits.set(commit.head_node_id, result.commit),
                by_id=state.by_id.set(result.commit.id, result.commit),
                generation=state.generation + 1,
                usage=state.usage.record_compaction(),
            )
        self.states[session_id] = state
        if self.observer is not None:
            self.observer.compacted(session_id, result)
        return result

    def compact_now(self, turn: Turn, commit: ContextCommit, broken: str | None) -> CompactResult:
        """A compaction in the turn (the emergency); ``broken`` names a summarizer failure just seen.

        After one the structural summary is used at once: the turn does not wait twice.
        """

        def failed(_: tuple[Message, ...]) -> str:
            raise RuntimeError(broken)

        summarizer = failed if broken is not None else None
        args = (turn.session_id, commit, turn.window, turn.now, turn.fixed, turn.path)
        return self._compact(*args, turn.serves, summarizer)

    def background_runner(self) -> Runner:
        """The runner background summaries start on (set, since the step runs only with one)."""
        assert self.background is not None  # noqa: S101 - the step runs only with a runner
        return self.background

    def decide(self, budget: BudgetAllocation, session_id: str) -> Action:
        """The policy's action for ``budget``, under the session's hold."""
        return decide(budget, self.policy, self._state(session_id).hold)

    def _latest(self, session_id: str, fallback: ContextCommit) -> ContextCommit:
        state = self._state(session_id)
        head = fallback.head_node_id
        return state.commits.get(head, fallback) if head is not None else fallback

    # -- decisions, compaction, usage ------------------------------------------------------

    def should_recommend(self, prep: TurnPrep) -> bool:
        """At or over the recommend threshold (70 % by default)."""
        return (
            self.policy.recommend_pct is not None and prep.budget_pct >= self.policy.recommend_pct
        )

    def should_auto_compact(self, prep: TurnPrep) -> bool:
        """At or over the compact threshold (80 % by default) with auto-compaction on."""
        threshold = self.policy.auto_pct
        return self.auto_compact and threshold is not None and prep.budget_pct >= threshold

    def compact(  # type: ignore[override]
        self,
        session_id: str,
        *,
        window: int,
        now: float = 0.0,
        keep_recent_tokens: int | None = None,
    ) -> Result[CompactResult, EngineError]:
        """Compact the latest commit of the session's head now (the user's ``/compact``)."""
        commit = self._state(session_id).head_commit
        if commit is None:
            return Failure(
                EngineError(session_id, "no prepared commit to compact; call prepare first")
            )
        cut = (
            self.cut
            if keep_recent_tokens is None
            else attrs.evolve(self.cut, keep_recent_tokens=keep_recent_tokens)
        )
        saved, self.cut = self.cut, cut
        try:
            return Success(self._compact(session_id, commit, window, now, 0, []))
        finally:
            self.cut = saved

    def after_turn(
        self, session_id: str, usage: ProviderUsage, prep: TurnPrep, on_event: OnEvent | None = None
    ) -> None:
        """Record the provider's usage as the measurement of this head and generation."""
        state = self._state(session_id)
        measured = Measurement(prep.head, state.generation, usage.prompt_total)
        recorded = state.usage.record(usage, estimated_request=prep.request_tokens, head=prep.head)
        self.states[session_id] = attrs.evolve(state, usage=recorded, measurement=measured)
        if self.store is not None:
            self.store.save_usage(session_id, recorded)
        if self.observer is not None:
            self.observer.recorded(session_id, usage, prep)
        if on_event is not None and self.should_recommend(prep):
            on_event("compaction_recommended", {"budget_pct": prep.budget_pct, "head": prep.head})


def _pinned(
    commit: ContextCommit, state: SessionState, head: str | None
) -> tuple[ContextCommit, SessionState, tuple[str, ...]]:
    """The head's commit with the pins asked for applied; the notes say what was refused."""
    if not state.pins or head is None:
        return commit, state, ()
    done = apply_pins(commit, state.pins)
    notes = tuple(f"cannot pin {node}: {why}" for node, why in done.refused)
    state = attrs.evolve(
        state,
        pins=Map(),
        commits=state.commits.set(head, done.commit),
        by_id=state.by_id.set(done.commit.id, done.commit),
    )
    return done.commit, state, notes


def _same_facts(a: Facts, b: Facts) -> bool:
    """Whether two facts are the same, their ruler and cited set compared by identity.

    ``==`` compares a cited set element by element (a pyrsistent set of 20,000 ids: 0.7 s).
    """
    return (
        a.tokenizer is b.tokenizer
        and a.cited is b.cited
        and (a.now, a.context_window, a.budget, a.head_turn)
        == (b.now, b.context_window, b.budget, b.head_turn)
        and a.meter is b.meter
    )
