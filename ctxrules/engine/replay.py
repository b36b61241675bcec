"""Replay a recorded session: at each LLM call, what the engine would send, beside the naive resend."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import attrs
from pyrsistent import pmap

from ctxrules.check import protocol_valid
from ctxrules.commit import ContextCommit
from ctxrules.dag import Call, Role, Session, branch
from ctxrules.engine.default import DefaultContextEngine
from ctxrules.engine.turn import TurnPrep
from ctxrules.generation import CommitMap, ensure_latest_commit
from ctxrules.render import Message, count_messages
from ctxrules.rules import Facts, Pipeline
from ctxrules.tokens import Tokenizer
from ctxrules.tokens.usage import ProviderUsage

#: Provider prices relative to an uncached input token (the issue's cache-weighted cost).
CACHE_READ, CACHE_WRITE, UNCACHED = 0.1, 1.25, 1.0


@attrs.frozen
class Request:
    """One replayed LLM call: what the pipeline sent and what a naive resend would have."""

    index: int
    node_id: str
    sent: int
    cached_prefix: int
    naive: int
    naive_cached_prefix: int
    window: int
    input_budget: int
    compaction: str | None
    changed: Mapping[str, int]
    snipped: bool
    protocol_violations: int

    @property
    def naive_overflows(self) -> bool:
        """Whether resending the whole history would not have fit the window."""
        return self.naive > self.window

    @property
    def cost(self) -> float:
        """Cache-weighted cost: the shared prefix read from cache, the rest written to it."""
        return CACHE_READ * self.cached_prefix + CACHE_WRITE * (self.sent - self.cached_prefix)

    @property
    def naive_cost(self) -> float:
        """The same cost for the naive resend, which always extends the previous request."""
        return CACHE_READ * self.naive_cached_prefix + CACHE_WRITE * (
            self.naive - self.naive_cached_prefix
        )


def shared_prefix_tokens(
    previous: tuple[Message, ...],
    current: tuple[Message, ...],
    current_tokens: int,
    tokenizer: Tokenizer,
) -> int:
    """Tokens of the longest run of leading messages the two requests share (a cache could reuse them).

    Only the unshared tail is counted (``current_tokens`` is the whole request's count), so a
    replay does not re-tokenize its history at every call.
    """
    shared = 0
    for old, new in zip(previous, current, strict=False):
        if old != new:
            break
        shared += 1
    return current_tokens - count_messages(current[shared:], tokenizer)


def llm_calls(session: Session) -> Iterator[tuple[int, Call]]:
    """Each assistant node on the head's branch with the index of the node before it."""
    calls = branch(session.graph, session.head)
    for index, call in enumerate(calls):
        if call.role is Role.ASSISTANT and index > 0:
            yield index - 1, call


def replay(
    recorded: Session,
    engine: DefaultContextEngine,
    *,
    window: int,
    on_request: Callable[[Request], None] | None = None,
) -> list[Request]:
    """Prepare every LLM call of ``recorded`` through ``engine``; the recorded reply becomes history."""
    calls = branch(recorded.graph, recorded.head)
    naive_commits: CommitMap = pmap()
    plain = Pipeline()
    previous: tuple[Message, ...] = ()
    naive_previous = 0
    done: list[Request] = []
    for before, call in llm_calls(recorded):
        head = calls[before].id
        live = Session(recorded.session_id, recorded.graph, head)
        prep: TurnPrep = engine.prepare(live, window=window, now=call.created_at).unwrap()
        facts = Facts(now=call.created_at, tokenizer=engine.tokenizer)
        naive_commit: ContextCommit
        naive_commit, naive_commits = ensure_latest_commit(
            naive_commits, recorded.graph, head, plain, facts
        ).unwrap()
        compaction = next(
            (s.split(":", 1)[1] for s in prep.decision_path if s.startswith("compact:")), None
        )
        request = Request(
            index=len(done),
            node_id=call.id,
            sent=prep.request_tokens,
            # The replay's engine has no system prompt or tools, so the request is the messages.
            cached_prefix=shared_prefix_tokens(
                previous, prep.messages, prep.request_tokens, engine.tokenizer
            ),
            naive=naive_commit.total_tokens,
            naive_cached_prefix=naive_previous,
            window=window,
            input_budget=prep.budget.input_budget,
            compaction=compaction,
            changed=dict(prep.changed),
            snipped=any(s.startswith("snip:") for s in prep.decision_path),
            protocol_violations=len(protocol_valid(prep.messages)),
        )
        engine.after_turn(recorded.session_id, ProviderUsage(prep.request_tokens), prep)
        previous, naive_previous = prep.messages, naive_commit.total_tokens
        done.append(request)
        if on_request is not None:
            on_request(request)
    return done
