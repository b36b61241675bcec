"""The cache-weighted cost of a sequence of requests under a `CacheProfile`, as pure values.

A request is described by its token count, how many of its leading messages it shares
with the request before it, and the tokens of those messages. The cache state is the
chain of earlier requests that are still a prefix of the newest one: with a breakpoint at
the newest message and one at the last message shared with the previous request, the
provider serves the longest of them that is still alive.
"""

from __future__ import annotations

import attrs
from pyrsistent import PVector, pvector

from ctxrules.cache.profiles import CacheProfile


@attrs.frozen
class Entry:
    """A cached prefix: its length in messages and tokens, and when it was last used."""

    messages: int
    tokens: int
    used_at: float


@attrs.frozen
class Priced:
    """What one request cost: tokens read from the cache, written to it, sent uncached."""

    read: int
    written: int
    uncached: int
    output: int
    cost: float
    output_cost: float = 0.0

    @property
    def prompt_cost(self) -> float:
        """The cost of the prompt alone (the reply is the same whatever the context policy)."""
        return self.cost - self.output_cost

    @property
    def input_tokens(self) -> int:
        """Every prompt token of the request."""
        return self.read + self.written + self.uncached


@attrs.frozen
class CacheState:
    """The provider's cache as seen by one session: the live prefixes of the newest request."""

    entries: PVector[Entry] = attrs.field(factory=pvector)

    def price(
        self,
        profile: CacheProfile,
        *,
        now: float,
        tokens: int,
        messages: int,
        shared_messages: int,
        shared_tokens: int,
        output: int = 0,
    ) -> tuple[Priced, CacheState]:
        """Price one request and return the cache after it.

        ``shared_messages`` and ``shared_tokens`` describe the leading messages the request
        has in common with the previous one (the system prompt and tool schemas included).

        >>> from ctxrules.cache.profiles import anthropic
        >>> first, cache = CacheState().price(anthropic(), now=0, tokens=2000, messages=2,
        ...     shared_messages=0, shared_tokens=0)
        >>> second, _ = cache.price(anthropic(), now=10, tokens=2500, messages=4,
        ...     shared_messages=2, shared_tokens=2000)
        >>> first.cost, second.read, second.cost
        (2500.0, 2000, 825.0)
        """
        alive = [
            e
            for e in self.entries
            if e.messages <= shared_messages and now - e.used_at <= profile.ttl_seconds
        ]
        read = self._read(profile, alive, shared_tokens)
        if not profile.caches or tokens < profile.min_tokens:
            reply = profile.output * output
            priced = Priced(0, 0, tokens, output, tokens + reply, reply)
            return priced, CacheState()
        if profile.breakpoints:
            written, uncached = tokens - read, 0
        else:
            written, uncached = 0, tokens - read
        reply = profile.output * output
        cost = profile.read * read + profile.write * written + uncached + reply
        kept = [attrs.evolve(e, used_at=now) if e.tokens == read else e for e in alive]
        kept.append(Entry(messages, tokens, now))
        return Priced(read, written, uncached, output, cost, reply), CacheState(pvector(kept))

    @staticmethod
    def _read(profile: CacheProfile, alive: list[Entry], shared_tokens: int) -> int:
        if not profile.caches:
            return 0
        if profile.breakpoints:
            # Explicit breakpoints: only a prefix some earlier request wrote can be read.
            best = max((e.tokens for e in alive), default=0)
        else:
            # Automatic: any shared prefix, in steps, if an earlier request is still cached.
            best = shared_tokens if alive else 0
            best -= best % profile.step
        best = min(best, shared_tokens)
        return best if best >= profile.min_tokens else 0
