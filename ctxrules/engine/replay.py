"""Replay a recorded session: at each LLM call, what the engine would send, beside the naive resend.

Both are priced under a provider's cache profile (`ctxrules.cache`): the same recorded
timing, the same cache rules, so the figures compare policies, not assumptions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

import attrs
from immutables import Map

from ctxrules.cache import CacheProfile, CacheState, Priced, anthropic
from ctxrules.check import protocol_valid
from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Graph, Role, Session, branch
from ctxrules.engine.default import DefaultContextEngine
from ctxrules.engine.turn import TurnPrep
from ctxrules.fidelity import Fidelity, HistoryIndex, SentText, measure, reply_references
from ctxrules.generation import branch_nodes, item_for, node_text
from ctxrules.render import Message, ToolUseBlock, count_messages
from ctxrules.render.item import counted
from ctxrules.render.render import RenderedMessages, item_messages
from ctxrules.rules.batching import held_back, last_batch
from ctxrules.tokens import Tokenizer
from ctxrules.tokens.usage import ProviderUsage


@attrs.frozen
class Request:
    """One replayed LLM call: what the pipeline sent and what a naive resend would have.

    ``extends`` says whether the request starts with the whole previous request (a pure
    extension); ``cause`` names what broke the prefix when it did not: ``compaction``,
    ``snip``, the reasons of the items that changed (``tail_window``, ``gated``, ``idle``…),
    or ``other``. ``batch`` names the batch point this request is, if any; ``held`` says it
    was a turn-count point weighed and held back (`ctxrules.rules.batching.held_back`). ``waited`` says
    the turn waited for a summary (a compaction in the turn, or a background summary at the
    emergency threshold); ``summary_cost`` is what the summarizer calls read by this turn
    cost (their prompt uncached, their text at the output price).
    """

    index: int
    node_id: str
    sent: int
    naive: int
    window: int
    input_budget: int
    compaction: str | None
    changed: Mapping[str, int]
    snipped: bool
    protocol_violations: int
    extends: bool
    cause: str | None
    batch: str | None
    priced: Priced
    naive_priced: Priced
    history: int = 0
    summary_tokens: int = 0
    fixed: int = 0
    fidelity: Fidelity = attrs.field(factory=Fidelity)
    waited: bool = False
    summary_cost: float = 0.0
    held: bool = False

    @property
    def naive_overflows(self) -> bool:
        """Whether resending the whole history would not have fit the window."""
        return self.naive > self.window

    @property
    def snipped_for_summary(self) -> bool:
        """Whether the request was snipped but would have fit without its summary."""
        limit = self.input_budget - self.fixed
        return self.snipped and self.history - self.summary_tokens <= limit

    @property
    def cached_prefix(self) -> int:
        """Prompt tokens the provider served from its cache."""
        return self.priced.read

    @property
    def naive_cached_prefix(self) -> int:
        """The same for the naive resend."""
        return self.naive_priced.read

    @property
    def cost(self) -> float:
        """Cache-weighted prompt cost plus the summarizer's, in uncached-input-token units (the reply kept apart)."""
        return self.priced.prompt_cost + self.summary_cost

    @property
    def naive_cost(self) -> float:
        """The same cost for the naive resend, which always extends the previous request."""
        return self.naive_priced.prompt_cost

    @property
    def hit_rate(self) -> float:
        """Share of the request's prompt tokens read from the cache."""
        return self.priced.read / self.sent if self.sent else 0.0


def shared_prefix(
    previous: tuple[Message, ...],
    current: tuple[Message, ...],
    current_tokens: int,
    tokenizer: Tokenizer,
) -> tuple[int, int]:
    """How many leading messages the two requests share, and their tokens.

    Only the unshared tail is counted (``current_tokens`` is the whole request's count), so a
    replay does not re-tokenize its history at every call.
    """
    shared = 0
    for old, new in zip(previous, current, strict=False):
        # An item renders once, so a shared message is usually the very same object.
        if old is not new and old != new:
            break
        shared += 1
    return shared, current_tokens - _tail_tokens(current, shared, tokenizer)


def _tail_tokens(current: tuple[Message, ...], shared: int, tokenizer: Tokenizer) -> int:
    """Tokens of ``current[shared:]``: the counts its items carry, when the tail is whole items."""
    remaining = len(current) - shared
    if not isinstance(current, RenderedMessages):
        return count_messages(current[shared:], tokenizer)
    tokens = 0
    for item in reversed(current.items):
        if remaining <= 0:
            break
        messages = item_messages(item)
        if len(messages) > remaining:
            # The prefix ends inside this item (its call kept, its result changed, say):
            # only its unshared messages are counted.
            return tokens + count_messages(messages[len(messages) - remaining :], tokenizer)
        remaining -= len(messages)
        tokens += item.tokens
    return tokens if remaining == 0 else count_messages(current[shared:], tokenizer)


def naive_growth(
    graph: Graph, new: Sequence[Call], commit: ContextCommit, tokenizer: Tokenizer
) -> tuple[int, int]:
    """Items and tokens the naive resend gains from the ``new`` branch nodes.

    The engine counted the same items when they arrived: their counts are read from the
    end of ``commit`` where the engine left them untouched, and only items it tightened on
    arrival (or that do not line up) are built and counted again.
    """
    nodes = list(branch_nodes(graph, new))
    tail = commit.items[len(commit.items) - len(nodes) :] if nodes else ()
    tokens = 0
    for index, node in enumerate(nodes):
        ours = tail[index] if len(tail) == len(nodes) else None
        if ours is not None and ours.source_node_id == node.id and ours.reason == "new":
            tokens += ours.tokens
        else:
            tokens += counted(item_for(node, 0), tokenizer).tokens
    return len(nodes), tokens


def visible_summary_tokens(commit: ContextCommit) -> int:
    """Tokens of the commit's summary: one item, as a commit has at most one (invariant 12)."""
    at = commit.summary_at
    return commit.items[at].tokens if at >= 0 else 0


@attrs.frozen
class ProtocolCheck:
    """Invariant 11 checked request by request, on what is new in each.

    When a request extends a valid previous one, only its tail is checked (with the
    message before it, which a leading tool result pairs with), and the tail's call ids
    against those the prefix used; otherwise the whole request is checked again.
    """

    #: Call ids of the previous request's messages but its last (a valid last has none).
    earlier_ids: Map[str, None] = attrs.field(factory=Map)
    last: tuple[Message, ...] = ()
    valid: bool = False

    def check(self, messages: tuple[Message, ...], shared: int) -> tuple[int, ProtocolCheck]:
        """The violations in ``messages`` (sharing ``shared`` leading messages), and the next check."""
        extends = self.valid and 0 < shared == len(self.last)
        start = shared - 1 if extends else 0
        window = messages[start:]
        found = len(protocol_valid(window))
        ids = self.earlier_ids if extends else Map()
        if extends:
            # The window's first message alone: its results pair with a message outside the
            # window, so what it reports here is not a violation of the request.
            found -= len(protocol_valid(window[:1]))
            found += sum(1 for call in _call_ids(window) if call in ids)
        with ids.mutate() as grown:
            for call in _call_ids(messages[start : len(messages) - 1]):
                grown.set(call, None)
            ids = grown.finish()
        return found, ProtocolCheck(ids, messages, found == 0)


def _call_ids(messages: Iterable[Message]) -> Iterator[str]:
    return (b.id for m in messages for b in m.blocks if isinstance(b, ToolUseBlock))


def llm_calls(session: Session) -> Iterator[tuple[int, Call]]:
    """Each assistant node on the head's branch with the index of the node before it."""
    calls = branch(session.graph, session.head)
    for index, call in enumerate(calls):
        if call.role is Role.ASSISTANT and index > 0:
            yield index - 1, call


def waited(prep: TurnPrep) -> bool:
    """Whether the turn waited for a summary: at the emergency threshold, or compacting in the turn."""
    path = prep.decision_path
    if "summary:waited" in path:
        return True
    background = any(step.startswith("summary:") for step in path)
    return not background and any(
        step.startswith("compact:") and not step.startswith("compact:no_op") for step in path
    )


def _paid(engine: DefaultContextEngine, session_id: str) -> tuple[int, int]:
    state = engine.states.get(session_id)
    usage = state.usage if state is not None else None
    return (usage.summary_prompt_tokens, usage.summary_completion_tokens) if usage else (0, 0)


def break_cause(prep: TurnPrep, snipped_before: bool, *, renewed: bool = False) -> str:
    """What rewrote an earlier part of the request: compaction, snip, or the changed items' reasons.

    ``renewed`` says the system text changed (a receipt renewed): ``receipt`` leads the
    items' reasons, since the rewrite then starts before the first message.
    """
    if any(step.startswith("compact:finished") for step in prep.decision_path):
        return "compaction"
    if snipped_before or any(step.startswith("snip:") for step in prep.decision_path):
        return "snip"
    reasons = sorted(reason for reason, count in prep.changed.items() if count)
    if renewed:
        reasons.insert(0, "receipt")
    return "+".join(reasons) if reasons else "other"


@attrs.frozen
class _Previous:
    """What the next request is compared with."""

    messages: tuple[Message, ...] = ()
    naive: int = 0
    naive_messages: int = 0
    snipped: bool = False
    cache: CacheState = attrs.field(factory=CacheState)
    naive_cache: CacheState = attrs.field(factory=CacheState)
    batches: int = 0
    #: The system text sent (None before the first request): a receipt renewed changes it.
    system: str | None = None
    commit: ContextCommit | None = None


def replay(
    recorded: Session,
    engine: DefaultContextEngine,
    *,
    window: int,
    on_request: Callable[[Request], None] | None = None,
    profile: CacheProfile | None = None,
    search: bool = False,
    fidelity: bool = True,
    system_prompt: str | None = None,
    tools: Sequence[Mapping[str, object]] = (),
    pins: Mapping[str, Sequence[tuple[str, bool]]] | None = None,
) -> list[Request]:
    """Prepare every LLM call of ``recorded`` through ``engine``; the recorded reply becomes history.

    Each request and its naive resend are priced under ``profile`` (Anthropic by default),
    and its fidelity measured against the recorded reply (`ctxrules.fidelity`); ``search``
    says whether the requests offer the recall tools (the spec's ``[recall] tools``): they
    then end their system text with a receipt, as `ctxrules.Context`'s do, and a request
    whose receipt was renewed is priced as written again from its system text.
    ``fidelity=False`` skips that measure (each request's is then empty), for timings that
    compare the replay with the engine alone. ``system_prompt`` and ``tools`` are sent with
    every request, as a live loop sends them (`ctxrules.engine.frame`); ``pins`` maps the
    head of a request to the (node, pinned) asked for before it.
    """
    profile = profile or anthropic()
    calls = branch(recorded.graph, recorded.head)
    last = _Previous()
    done: list[Request] = []
    # Running measurements: each request adds what is new (the naive resend's items and
    # tokens, the protocol check of the new messages), never recounting the history.
    naive_total = naive_count = seen = 0
    protocol = ProtocolCheck()
    # The fidelity index grows by the nodes each request adds, as the naive resend does.
    history, sent = HistoryIndex(), SentText()
    for before, call in llm_calls(recorded):
        head = calls[before].id
        live = Session(recorded.session_id, recorded.graph, head)
        paid_before = _paid(engine, recorded.session_id)
        for asked, pinned in (pins or {}).get(head, ()):
            engine.pin(recorded.session_id, asked, pinned=pinned)
        prep: TurnPrep = engine.prepare(
            live,
            window=window,
            now=call.created_at,
            receipts=search,
            tools=tools,
            system_prompt=system_prompt,
        ).unwrap()
        for node in calls[seen : before + 1] if fidelity else ():
            history.add_call(recorded.graph, node)
        paid_after = _paid(engine, recorded.session_id)
        # The summarizer's prompt is sent uncached and its text is output: both are paid.
        summary_cost = (paid_after[0] - paid_before[0]) + profile.output * (
            paid_after[1] - paid_before[1]
        )
        added, added_tokens = naive_growth(
            recorded.graph, calls[seen : before + 1], prep.commit, engine.tokenizer
        )
        naive_count, naive_total, seen = naive_count + added, naive_total + added_tokens, before + 1
        fixed = prep.budget.system + prep.budget.tools_schema
        shared, shared_tokens = shared_prefix(
            last.messages, prep.messages, prep.request_tokens - fixed, engine.tokenizer
        )
        cached_fixed = fixed
        renewed = last.system is not None and prep.system != last.system
        if renewed:
            # A new system text (a receipt renewed): the provider reads the tool schemas from
            # its cache and writes the rest again, the messages it shares included.
            shared, shared_tokens, cached_fixed = 0, 0, prep.budget.tools_schema
        measured = Fidelity()
        if fidelity:
            history.add_summaries(prep.commit)
            # The text the previous request shares with this one is read again from it.
            sent = sent.grown(prep.messages, shared)
            found = reply_references(recorded.graph, call, history)
            measured = measure(history, found, prep.messages, search=search, text=sent)
        output = engine.tokenizer.count(node_text(call.output))
        priced, cache = last.cache.price(
            profile,
            now=call.created_at,
            tokens=prep.request_tokens,
            messages=len(prep.messages),
            shared_messages=shared,
            shared_tokens=shared_tokens + cached_fixed,
            output=output,
        )
        naive_priced, naive_cache = last.naive_cache.price(
            profile,
            now=call.created_at,
            tokens=naive_total + fixed,
            messages=naive_count,
            shared_messages=last.naive_messages,
            shared_tokens=last.naive + fixed,
            output=output,
        )
        extends = shared == len(last.messages) and not renewed
        violations, protocol = protocol.check(prep.messages, shared)
        batches, why = last_batch(prep.commit)
        compaction = next(
            # The outcome alone: a structural fallback (``compact:finished:fallback``) is a
            # finished compaction too.
            (s.split(":")[1] for s in prep.decision_path if s.startswith("compact:")),
            None,
        )
        snipped = any(s.startswith("snip:") for s in prep.decision_path)
        request = Request(
            index=len(done),
            node_id=call.id,
            sent=prep.request_tokens,
            naive=naive_total + fixed,
            window=window,
            input_budget=prep.budget.input_budget,
            compaction=compaction,
            changed=dict(prep.changed),
            snipped=snipped,
            protocol_violations=violations,
            extends=extends,
            cause=None if extends else break_cause(prep, last.snipped, renewed=renewed),
            batch=why.name.lower() if why is not None and batches != last.batches else None,
            priced=priced,
            naive_priced=naive_priced,
            history=prep.commit.total_tokens,
            fixed=fixed,
            summary_tokens=visible_summary_tokens(prep.commit),
            fidelity=measured,
            waited=waited(prep),
            summary_cost=summary_cost,
            held=held_back(last.commit, prep.commit),
        )
        engine.after_turn(recorded.session_id, ProviderUsage(prep.request_tokens), prep)
        last = _Previous(
            prep.messages,
            naive_total,
            naive_count,
            snipped,
            cache,
            naive_cache,
            batches,
            prep.system,
            prep.commit,
        )
        done.append(request)
        if on_request is not None:
            on_request(request)
    return done
