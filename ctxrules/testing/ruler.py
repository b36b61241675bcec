"""`MemoCounter`: the heuristic ruler with its counts remembered, so checks recount nothing."""

from __future__ import annotations

import attrs

from ctxrules.tokens import HeuristicCounter, Tokenizer


@attrs.define(eq=False)
class MemoCounter:
    """A tokenizer that remembers each text's count; counting is pure, so the counts are equal.

    A check counts the same texts again and again (every output of every rule, rendered);
    this turns each repeat into a dict lookup. The memory is dropped past ``limit`` texts.

    >>> ruler = MemoCounter()
    >>> ruler.count("天气非常好") == HeuristicCounter().count("天气非常好")
    True
    """

    inner: Tokenizer = attrs.field(factory=HeuristicCounter)
    limit: int = 200_000
    _counts: dict[str, int] = attrs.field(factory=dict, repr=False)

    @property
    def name(self) -> str:
        """The inner ruler's name: the counts are its counts."""
        return self.inner.name

    @property
    def message_overhead(self) -> int:
        """The inner ruler's overhead per message."""
        return self.inner.message_overhead

    def count(self, text: str) -> int:
        """The inner ruler's count of ``text``, computed once."""
        known = self._counts.get(text)
        if known is None:
            if len(self._counts) >= self.limit:
                self._counts.clear()
            known = self._counts[text] = self.inner.count(text)
        return known


#: The ruler `ctxrules check` counts with.
CHECK_RULER = MemoCounter()
