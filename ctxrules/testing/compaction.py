"""Fake summarizers that fail in every way a real one can, and a replay of a session with compaction."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from typing import Literal, cast

import attrs
from hypothesis import strategies as st
from pyrsistent import pmap
from returns.result import Success

from ctxrules.check.compaction import compaction_step
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.compaction import (
    ATTACH_CLOSE,
    ATTACH_OPEN,
    Action,
    CutParams,
    Hold,
    Policy,
    compact,
    decide,
    hold_after,
    snip,
)
from ctxrules.compaction.occupancy import Measurement, next_generation, occupancy
from ctxrules.dag import Session
from ctxrules.generation import NO_COMMITS, CommitMap, ensure_latest_commit
from ctxrules.render import Message, TextBlock, render_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.testing.commits import texts
from ctxrules.testing.dag import sessions
from ctxrules.tokens import HeuristicCounter, Tokenizer
from ctxrules.tokens.budget import allocate

#: How a fake summarizer behaves when called.
Behaviour = Literal["ok", "raise", "hang", "empty", "garbage", "non_text", "cancel", "cancelled"]
BEHAVIOURS: tuple[Behaviour, ...] = (
    "ok",
    "raise",
    "hang",
    "empty",
    "garbage",
    "non_text",
    "cancel",
    "cancelled",
)


def five_sections(messages: tuple[Message, ...]) -> str:
    """A short, well-formed summary naming how long the prompt was."""
    size = sum(len(b.text) for m in messages for b in m.blocks if isinstance(b, TextBlock))
    return (
        "1. User intent: finish the task.\n2. Decisions: keep the tests green.\n"
        f"3. Work completed: read a {size}-character prompt.\n4. Outstanding: none.\n"
        "5. Active context: repository checked out."
    )


@attrs.define(eq=False)
class FakeSummarizer:
    """A summarizer with one `Behaviour`; it records each call and can be used sync or async.

    ``cancel`` is the event to pass to `compact`: ``cancel`` sets it during the call,
    ``cancelled`` before it. ``hang`` blocks for ``hang_seconds`` (sync: until `release`).
    """

    behaviour: Behaviour = "ok"
    hang_seconds: float = 1.0
    calls: list[tuple[Message, ...]] = attrs.field(factory=list)
    cancel: threading.Event = attrs.field(factory=threading.Event)
    _released: threading.Event = attrs.field(factory=threading.Event, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.behaviour == "cancelled":
            self.cancel.set()

    def release(self) -> None:
        """End any blocking `hang` at once, so no thread outlives the test."""
        self._released.set()

    def _answer(self, messages: tuple[Message, ...]) -> str:
        match self.behaviour:
            case "raise":
                msg = "provider returned 401"
                raise RuntimeError(msg)
            case "empty":
                return "  \n"
            case "garbage":
                text = "".join(
                    b.text for m in messages for b in m.blocks if isinstance(b, TextBlock)
                )
                return text[::-1] * 2
            case "non_text":
                return cast("str", {"choices": []})
            case "cancel":
                self.cancel.set()
                return five_sections(messages)
            case _:
                return five_sections(messages)

    def __call__(self, messages: tuple[Message, ...]) -> str:
        """The blocking summarizer."""
        self.calls.append(messages)
        if self.behaviour == "hang":
            self._released.wait(self.hang_seconds)
        return self._answer(messages)

    async def summarize_async(self, messages: tuple[Message, ...]) -> str:
        """The coroutine summarizer."""
        self.calls.append(messages)
        if self.behaviour == "hang":
            await asyncio.sleep(self.hang_seconds)
        return self._answer(messages)


def summarizers(
    behaviours: tuple[Behaviour, ...] = BEHAVIOURS, *, hang_seconds: float = 1.0
) -> st.SearchStrategy[FakeSummarizer]:
    """Fresh fake summarizers that succeed, raise, hang, return blank or non-text, or are cancelled."""
    return st.builds(
        FakeSummarizer, behaviour=st.sampled_from(behaviours), hang_seconds=st.just(hang_seconds)
    )


@attrs.define
class ReplayReport:
    """What a replay saw: requests, compactions by outcome, and every broken rule."""

    window: int
    input_budget: int = 0
    requests: int = 0
    largest_request: int = 0
    over_budget: int = 0
    snipped: int = 0
    outcomes: Counter[str] = attrs.field(factory=Counter)
    fell_back: int = 0
    problems: list[str] = attrs.field(factory=list)


def replay_compaction(
    session: Session,
    window: int,
    summarizer: FakeSummarizer,
    tokenizer: Tokenizer,
    *,
    pipeline: Pipeline = Pipeline(),  # noqa: B008 - frozen value
    policy: Policy = Policy(),  # noqa: B008 - frozen value
    params: CutParams = CutParams(),  # noqa: B008 - frozen value
    fixed_tokens: int = 0,
    timeout: float | None = None,
    sources: dict[str, ContextCommit] | None = None,
) -> ReplayReport:
    """Send a request at every node of the head's branch: compact when the policy says, snip if still over.

    Each compaction is checked (invariants 3, 4, 5, 10, 12, 13, 14), its ``tokens_after``
    against the occupancy ruler, and each request against the input budget.
    """
    report = ReplayReport(window)
    commits: CommitMap = pmap()
    hold: Hold | None = None
    generation = 0
    measured: Measurement | None = None
    for step, call in enumerate(session.branch()):
        facts = Facts(now=float(step), context_window=window, tokenizer=tokenizer)
        commit, commits = ensure_latest_commit(
            commits, session.graph, call.id, pipeline, facts, sources=sources
        ).unwrap()
        budget = allocate(window, fixed_tokens, commit.total_tokens, 0)
        report.input_budget = budget.input_budget
        if decide(budget, policy, hold) in {Action.COMPACT, Action.EMERGENCY}:
            calls = len(summarizer.calls)
            result = compact(
                commit, summarizer, facts, params=params, fixed_tokens=fixed_tokens, timeout=timeout
            )
            report.outcomes[result.outcome.value] += 1
            report.fell_back += result.fell_back_to_structural
            report.problems += [
                f"step {step}: {v}"
                for v in compaction_step(
                    commit, result, session.graph, tokenizer, len(summarizer.calls) - calls
                )
            ]
            generation = next_generation(generation, result)
            commit = result.commit
            commits = commits.set(call.id, commit)
            ruler = occupancy(
                commit,
                window,
                generation=generation,
                measurement=measured,
                fixed_tokens=fixed_tokens,
            )
            if result.applied and ruler.total_used != result.tokens_after:
                report.problems.append(
                    f"step {step}: tokens_after={result.tokens_after}, occupancy={ruler.total_used}"
                )
            budget = allocate(window, fixed_tokens, commit.total_tokens, 0)
            hold = hold_after(budget, policy)
        sent = budget.input_used
        if budget.headroom < 0:
            cut = snip(render_commit(commit), budget.input_budget - fixed_tokens, tokenizer)
            sent = cut.tokens + fixed_tokens
            report.snipped += 1
        report.requests += 1
        report.largest_request = max(report.largest_request, sent)
        report.over_budget += sent > budget.input_budget
        measured = Measurement(call.id, generation, sent)
    return report


@st.composite
def cut_views(draw: st.DrawFn, *, max_units: int = 40, locked: bool = True) -> list[ContextItem]:
    """Rendered views for the cut: text and tool items with counted-looking tokens, attached blocks.

    Each block is an ``attach_open`` item, some items, and (usually) an ``attach_close`` item,
    all with the same ``attached_from``; ``locked`` lets items be locked at random.
    """
    items: list[ContextItem] = []
    for unit in range(draw(st.integers(0, max_units))):
        kind = draw(st.sampled_from(["user", "assistant", "tool", "system", "block"]))
        inner = draw(st.integers(0, 4)) if kind == "block" else 1
        source = f"c_{unit}" if kind == "block" else None
        roles = ["user"] * (kind == "block") + [
            draw(st.sampled_from(["user", "assistant", "tool"])) if kind == "block" else kind
            for _ in range(inner)
        ]
        if kind == "block" and draw(st.integers(0, 4)):
            roles.append("user")
        for k, role in enumerate(roles):
            reason = "new"
            if kind == "block" and k == 0:
                reason = ATTACH_OPEN
            elif kind == "block" and k == len(roles) - 1 and len(roles) > inner + 1:
                reason = ATTACH_CLOSE
            # Markers share one id per block, as expanded blocks do.
            node = (
                f"attach:s:{source}" if reason in (ATTACH_OPEN, ATTACH_CLOSE) else f"n_{len(items)}"
            )
            items.append(
                ContextItem(
                    node,
                    role,
                    rendered=draw(st.sampled_from(["", "text", "a longer text"])),
                    tokens=draw(st.integers(0, 3_000)),
                    locked=locked and draw(st.integers(0, 9)) == 0,
                    reason=reason,
                    attached_from=source,
                    tool_name="grep" if role == "tool" else None,
                    tool_call_id=f"call_{len(items)}" if role == "tool" else None,
                )
            )
    return items


def _source_commit(texts_: list[str], tokenizer: Tokenizer) -> ContextCommit:
    """A small commit of another session, to attach."""
    session = Session("s_source")
    for n, text in enumerate(texts_):
        session = session.send("user" if n % 2 == 0 else "assistant", text).unwrap()
    assert session.head is not None  # noqa: S101 - texts_ is never empty
    commit, _ = ensure_latest_commit(
        NO_COMMITS, session.graph, session.head, Pipeline(), Facts(tokenizer=tokenizer)
    ).unwrap()
    return commit


@st.composite
def agent_sessions(
    draw: st.DrawFn, *, max_turns: int = 8, tokenizer: Tokenizer | None = None
) -> tuple[Session, dict[str, ContextCommit]]:
    """A random `sessions` example grown by agent turns (text, tool calls) and attached commits.

    Returns the session and the source commits its attach pointers name, to pass to
    ``ensure_latest_commit(..., sources=...)``.
    """
    ruler = tokenizer or HeuristicCounter()
    session = draw(sessions(max_steps=12))
    sources: dict[str, ContextCommit] = {}
    for turn in range(draw(st.integers(1, max_turns))):
        if draw(st.integers(0, 5)) == 0:
            source = _source_commit(draw(st.lists(texts(20), min_size=1, max_size=4)), ruler)
            attached = session.attach(source)
            if isinstance(attached, Success):
                session, sources[source.id] = attached.unwrap(), source
        session = session.send("user", draw(texts(40))).unwrap()
        for step in range(draw(st.integers(0, 2))):
            session = session.send("assistant", draw(texts(30))).unwrap()
            caller = session.head or ""
            for call in range(draw(st.integers(0, 2))):
                session = session.record_call(
                    caller,
                    draw(st.sampled_from(["grep", "read_file", "bash"])),
                    {"path": f"src/{turn}_{step}_{call}.py"},
                    draw(texts(60)),
                    metadata={"tool_call_id": f"call_{turn}_{step}_{call}"},
                ).unwrap()
        session = session.send("assistant", draw(texts(30))).unwrap()
    return session, sources
