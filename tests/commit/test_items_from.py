"""`ContextCommit.with_items_from`: a new tail of items at the cost of the tail, the same commit as a whole new list."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.commit import _first_summary, items_digest
from ctxrules.commit.layout import summarized_spans

STATES = st.sampled_from([State.FULL, State.AGED, State.SUMMARIZED, State.SUMMARY])


def items(states: list[State], tag: str) -> list[ContextItem]:
    """An item per state, told apart by ``tag`` and position."""
    return [
        ContextItem(f"{tag}{n}", "tool", state=s, rendered=f"{tag}{n}", tokens=n % 7 + 1)
        for n, s in enumerate(states)
    ]


@given(
    st.lists(STATES, max_size=300),
    st.lists(STATES, max_size=150),
    st.floats(0, 1),
    st.booleans(),
)
def test_invariant_2_a_new_tail_is_the_commit_of_the_whole_list(
    before: list[State], after: list[State], share: float, remove_summary: bool
) -> None:
    """Invariants 2 and 12: digest, tokens, spans and first summary as if built from scratch."""
    base = ContextCommit("s").with_items(items(before, "a")).with_mark("rule", len(before))
    if remove_summary and base.summary_at >= 0:
        # A summary folded first, as a compaction folds the previous one.
        at = base.summary_at
        base = base.replace_items({at: ContextItem(f"a{at}", "tool", state=State.SUMMARIZED)})
        assert base.summary_at == _first_summary(base.items)
    start = int(share * len(before))
    tail = items(after, "b")
    new = base.with_items_from(start, tail)
    whole = [*base.items[:start], *tail]
    assert list(new.items) == whole
    assert new.digest == items_digest(whole)
    assert new.total_tokens == sum(i.tokens for i in whole)
    assert new.hidden == summarized_spans(whole)
    assert new.summary_at == _first_summary(whole)
    assert new.marks == {}
    assert new.id == base.with_items(whole).id
