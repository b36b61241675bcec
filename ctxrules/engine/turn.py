"""`TurnPrep`, the per-session state the engine keeps between turns, and what a turn changed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import attrs
from immutables import Map
from pyrsistent import PMap, pmap

from ctxrules.commit import ContextCommit
from ctxrules.compaction import Hold
from ctxrules.compaction.occupancy import Measurement, Occupancy, occupancy
from ctxrules.engine.rescue import RescueState
from ctxrules.render import Message
from ctxrules.rules import ReferenceTracker
from ctxrules.tokens import BudgetAllocation
from ctxrules.tokens.usage import Source, UsageState


@attrs.frozen
class TurnPrep:
    """Everything one LLM call needs and everything the engine decided on the way.

    ``messages`` is what to send (after any snip); ``decision_path`` names the steps that
    ran, in order; ``changed`` counts the items each rule changed this turn, by reason.
    """

    session_id: str
    head: str
    system: str
    messages: tuple[Message, ...]
    commit: ContextCommit
    budget: BudgetAllocation
    usage: UsageState
    estimate: int
    estimate_source: Source
    occupancy: Occupancy
    request_tokens: int
    active_summary_id: str | None
    changed: PMap[str, int]
    decision_path: tuple[str, ...]
    warnings: tuple[str, ...] = ()

    @property
    def budget_pct(self) -> float:
        """Input used as a share of the input budget."""
        return self.budget.input_used_pct


@attrs.frozen
class SessionState:
    """What the engine remembers of a session: commits, usage, the generation and holds.

    ``commits`` (by head node) and ``by_id`` grow by one commit a turn; they are HAMTs
    (``immutables.Map``), so a turn's new version is a few small nodes and the cyclic GC
    does not walk the whole session each time it meets the new version.
    """

    commits: Map[str, ContextCommit] = attrs.field(factory=Map)
    by_id: Map[str, ContextCommit] = attrs.field(factory=Map)
    references: ReferenceTracker = attrs.field(factory=ReferenceTracker)
    observed_head: str | None = None
    usage: UsageState = attrs.field(factory=UsageState)
    generation: int = 0
    hold: Hold | None = None
    measurement: Measurement | None = None
    head: str | None = None
    rescue: RescueState = attrs.field(factory=RescueState)
    last_request: int = 0
    #: Pins asked for since the last request (node id: pin or unpin), applied at the next.
    pins: Map[str, bool] = attrs.field(factory=Map)
    #: The last receipt and what it was computed for (batch count and stable items).
    receipt: tuple[object, str] = (None, "")

    @property
    def head_commit(self) -> ContextCommit | None:
        """The latest commit of the head last prepared: what the last request was built from."""
        return self.commits.get(self.head) if self.head is not None else None


def changed_since(before: ContextCommit | None, commit: ContextCommit) -> Counter[str]:
    """How many of ``before``'s items changed state in ``commit``, by their new reason.

    O(changed items) when ``commit`` was generated from ``before`` (its ``replaced``
    positions say which); after a compaction, which moves positions, the items from the
    first difference on are compared (the chunks both share are passed over unread).
    """
    if before is None or commit is before:
        return Counter()
    if commit.replaced is None:
        start = commit.items.first_difference(before.items)
        if start is None:
            return Counter()
        earlier = {i.source_node_id: i.state for i in before.items[start:]}
        return Counter(
            i.reason
            for i in commit.items[start:]
            if i.source_node_id in earlier and earlier[i.source_node_id] is not i.state
        )
    old, new = before.items, commit.items
    return Counter(
        new[p].reason
        for p in sorted(set(commit.replaced))
        if p < len(old) and old[p].state is not new[p].state
    )


def turn_prep(
    state: SessionState,
    commit: ContextCommit,
    before: ContextCommit | None,
    *,
    session_id: str,
    system: str,
    warnings: tuple[str, ...],
    messages: tuple[Message, ...],
    budget: BudgetAllocation,
    fixed: int,
    request: int,
    path: Sequence[str],
) -> TurnPrep:
    """The `TurnPrep` of ``commit`` (prepared from ``before``): estimate, occupancy, changes.

    ``request`` counts the messages sent, ``fixed`` the system prompt and tool schemas.
    """
    prefix_unchanged = (
        before is not None
        and state.measurement is not None
        and state.generation == state.measurement.generation
    )
    estimate, source = state.usage.hybrid(request + fixed, prefix_unchanged=prefix_unchanged)
    record = occupancy(
        commit,
        budget.context_window,
        generation=state.generation,
        measurement=state.measurement,
        fixed_tokens=fixed,
    )
    if record.basis.value == "estimated":
        record = attrs.evolve(record, total_used=request + fixed, estimated=request + fixed)
    summary = commit.items[commit.summary_at].source_node_id if commit.summary_at >= 0 else None
    return TurnPrep(
        session_id,
        commit.head_node_id or "",
        system,
        messages,
        commit,
        budget,
        state.usage,
        estimate,
        source,
        record,
        request + fixed,
        summary,
        pmap(changed_since(before, commit)),
        tuple(path),
        warnings,
    )
