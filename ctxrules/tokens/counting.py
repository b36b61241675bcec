"""`CountingTokenizer`: a wrapper that records how much counting work it was asked to do."""

import attrs

from ctxrules.tokens.protocol import Tokenizer, WrapsRuler

__all__ = ["CountingTokenizer"]


@attrs.define
class _Tally:
    calls: int = 0
    chars: int = 0


# The one deliberately impure tokenizer: it exists so tests and benchmarks can prove that
# each piece of text is counted once (O(new work) per turn). The wrapper itself is frozen;
# only the private tally it holds changes, and it compares by identity because two
# wrappers with equal fields may still have done different work.
@attrs.frozen(eq=False)
class CountingTokenizer(WrapsRuler):
    """Delegate to `inner` and record how many `count` calls and characters it was asked for.

    >>> from ctxrules.tokens import HeuristicCounter
    >>> counting = CountingTokenizer(HeuristicCounter())
    >>> counting.count("hello"), counting.count("world!")
    (2, 2)
    >>> counting.calls, counting.chars
    (2, 11)
    """

    inner: Tokenizer = attrs.field(validator=attrs.validators.instance_of(Tokenizer))  # type: ignore[type-abstract]
    _tally: _Tally = attrs.field(factory=_Tally, init=False, repr=False)

    @property
    def calls(self) -> int:
        """How many times `count` was called."""
        return self._tally.calls

    @property
    def chars(self) -> int:
        """How many characters `count` was asked to count, in total."""
        return self._tally.chars

    def count(self, text: str) -> int:
        """Record the call, then return the inner tokenizer's count of `text`."""
        self._tally.calls += 1
        self._tally.chars += len(text)
        return self.inner.count(text)
