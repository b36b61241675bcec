"""`MemoCounter`: a ruler that remembers the counts of the texts it met lately."""

from __future__ import annotations

from collections import OrderedDict

import attrs

from ctxrules.tokens.protocol import Tokenizer, WrapsRuler

__all__ = ["MemoCounter"]

#: How many texts, and how many characters in all, a memo keeps before forgetting its oldest.
DEFAULT_ENTRIES = 4096
DEFAULT_CHARACTERS = 4_000_000


@attrs.define(eq=False)
class MemoCounter(WrapsRuler):
    """``inner`` with its recent counts kept: a text counted twice is tokenized once.

    A session counts the same texts again and again (tool names, an item's text at arrival
    and again by a replay's naive resend, a recorded reply): a lookup costs a hash, which
    Python keeps on the string. The memo is bounded by entries and by characters, oldest
    out first, so it never pins a session's history in memory. Counts are those of
    ``inner``: ``count`` stays deterministic and pure.

    >>> from ctxrules.tokens import HeuristicCounter
    >>> ruler = MemoCounter(HeuristicCounter())
    >>> ruler.count("天气非常好") == HeuristicCounter().count("天气非常好")
    True
    """

    inner: Tokenizer
    entries: int = DEFAULT_ENTRIES
    characters: int = DEFAULT_CHARACTERS
    # An OrderedDict drops its oldest in O(1): a dict's first key, after many deletions from
    # its front, is found by stepping over their holes (about 8 µs a new text once full).
    _counts: OrderedDict[str, int] = attrs.field(init=False, factory=OrderedDict, repr=False)
    _held: int = attrs.field(init=False, default=0, repr=False)

    def count(self, text: str) -> int:
        """``inner.count(text)``, from the memo when the text was counted lately."""
        found = self._counts.get(text)
        if found is not None:
            return found
        tokens = self.inner.count(text)
        if len(text) <= self.characters:
            self._keep(text, tokens)
        return tokens

    def _keep(self, text: str, tokens: int) -> None:
        counts = self._counts
        self._held += len(text)
        counts[text] = tokens
        while len(counts) > self.entries or self._held > self.characters:
            oldest, _ = counts.popitem(last=False)
            self._held -= len(oldest)


def memoized(tokenizer: Tokenizer) -> Tokenizer:
    """``tokenizer`` behind a `MemoCounter`, unless it already is one."""
    return tokenizer if isinstance(tokenizer, MemoCounter) else MemoCounter(tokenizer)
