"""The pages of a long original are remembered for every ruler that counts alike, not one object."""

from __future__ import annotations

from ctxrules.recall import page_bounds
from ctxrules.tokens import HeuristicCounter
from ctxrules.tokens.counting import CountingTokenizer
from ctxrules.tokens.memo import MemoCounter

LONG = "".join(f"src/pkg/mod{i}.py:{i}: def ident_{i:06x}(x): return x\n" for i in range(3000))


def test_a_second_context_s_ruler_reads_the_remembered_pages() -> None:
    """Each `Context` (one opened per request, or reopened) wraps its own ruler around the same one."""
    first = CountingTokenizer(MemoCounter(HeuristicCounter()))
    again = CountingTokenizer(MemoCounter(HeuristicCounter()))
    bounds = page_bounds(LONG, 500, first, 2400)
    assert first.calls > 0
    assert page_bounds(LONG, 500, again, 2400) == bounds
    assert again.calls == 0


def test_a_ruler_that_counts_otherwise_cuts_again() -> None:
    """Another inner ruler gives other pages: the remembered ones are not its answer."""

    class Halved(HeuristicCounter):
        def count(self, text: str) -> int:
            return 2 * super().count(text)

    page_bounds(LONG, 500, HeuristicCounter(), 2400)
    halved = CountingTokenizer(Halved())
    assert len(page_bounds(LONG, 500, halved, 2400)) > len(
        page_bounds(LONG, 500, HeuristicCounter(), 2400)
    )
    assert halved.calls > 0
