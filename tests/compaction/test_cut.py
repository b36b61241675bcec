"""find_cut_index: the six steps of reference 001 §4.2, its window table, and attached blocks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.compaction import (
    CutParams,
    NothingToFold,
    attach_blocks,
    find_cut_index,
    fold_bounds,
    keep_tokens,
    plan_compaction,
)
from ctxrules.testing.compaction import cut_views

# Reference 001 §4.2: window, desired keep, max safe keep, effective keep, tail share.
# At 8k the seed's 6,000 would exceed the 4,000-token input budget, so nothing could ever
# fold: the tail is capped at half the input budget (max_budget_share), and below a
# 16,000-token budget that share shrinks in proportion (an eighth at 8k, scale_below).
SEED_TABLE = [
    (8_000, 8_000, 6_000, 500, 0.0625),
    (16_000, 8_000, 12_000, 2_000, 0.125),
    (32_000, 8_000, 24_000, 8_000, 0.25),
    (64_000, 8_000, 56_000, 8_000, 0.125),
    (200_000, 20_000, 192_000, 20_000, 0.10),
    (272_000, 27_200, 264_000, 27_200, 0.10),
    (1_000_000, 40_000, 992_000, 40_000, 0.04),
]


def _texts(count: int, tokens: int, role: str = "user") -> list[ContextItem]:
    return [ContextItem(f"n{i}", role, rendered="text", tokens=tokens) for i in range(count)]


@pytest.mark.parametrize(("window", "desired", "max_safe", "effective", "share"), SEED_TABLE)
def test_seed_window_table(window, desired, max_safe, effective, share):
    """find_cut_index keeps exactly the seed's effective tail for each window from 8k to 1M."""
    params = CutParams()
    assert min(max(window * params.keep_ratio, 8_000), 40_000) == desired
    assert window - min(8_000, window * 0.25) == max_safe
    assert keep_tokens(window) == effective
    items = _texts(500, 100)
    cut = find_cut_index(items, window)
    tail = sum(item.tokens for item in items[cut:])
    assert tail == effective
    assert tail / window == pytest.approx(share)


def test_the_cut_fits_the_budget_it_serves():
    """Fault 3: at a small window the kept tail is under the input budget, so something folds."""
    items = _texts(60, 200)
    for window in (4_000, 8_000, 16_000):
        budget = window // 2
        cut = find_cut_index(items, window, budget=budget)
        assert sum(item.tokens for item in items[cut:]) <= budget
        assert cut > CutParams().protect_first_n


def test_keep_recent_tokens_overrides_ratio_clamp_and_cap():
    """keep_recent_tokens=N replaces steps 1 and 2 with N, whatever the window."""
    items = _texts(300, 200)
    params = CutParams(keep_recent_tokens=1_000, protect_last_n=0)
    for window in (8_000, 1_000_000):
        cut = find_cut_index(items, window, params)
        assert sum(item.tokens for item in items[cut:]) == 1_000


def test_double_gate_needs_five_text_messages():
    """One huge tool result meets the token target alone; the tail still holds five text messages."""
    big = ContextItem("big", "tool", rendered="x", tokens=50_000, tool_name="cat", tool_call_id="c")
    items = [*_texts(30, 100), big]
    cut = find_cut_index(items, 200_000, CutParams(protect_last_n=0))
    assert sum(1 for item in items[cut:] if item.role.value == "user") == 5


def test_protect_first_and_last():
    """Nothing before protect_first_n folds, and protect_last_n items stay while they fit the budget."""
    items = _texts(25, 2_000)
    assert find_cut_index(items, 200_000) == 5
    assert find_cut_index(items, 200_000, CutParams(protect_last_n=24)) == 3
    assert find_cut_index(_texts(3, 50_000), 200_000) == 3
    # 20 items of 5,000 are over half the 150,000 input budget: the token target decides.
    assert find_cut_index(_texts(25, 5_000), 200_000) == 20


def test_nothing_folds_when_the_view_fits_the_tail():
    """When the gates never close, or protection covers everything, the cut is protect_first_n."""
    items = [
        ContextItem(f"n{i}", "assistant" if i == 3 else "user", rendered="t", tokens=10)
        for i in range(30)
    ]
    assert find_cut_index(items, 200_000) == 3
    assert find_cut_index(items, 200_000, CutParams(keep_recent_tokens=0, protect_last_n=27)) == 3


def test_snaps_forward_to_a_user_message():
    """A cut that lands on an assistant or tool item moves forward to the next user item."""
    roles = ["user", "assistant", "tool", "tool", "assistant"] * 10
    items = [ContextItem(f"n{i}", r, rendered="t", tokens=1_000) for i, r in enumerate(roles)]
    params = CutParams(keep_recent_tokens=19_000, protect_last_n=0, keep_min_messages=0)
    assert items[31].role.value == "assistant"
    cut = find_cut_index(items, 200_000, params)
    assert cut == 35
    assert items[cut].role.value == "user"


def test_snaps_to_an_agent_step_when_no_user_message_follows():
    """In a long agent turn with no user item left, the tail starts at the next assistant step."""
    items = _texts(10, 1_000) + [
        ContextItem(f"t{i}", "assistant", rendered="step", tokens=1_000) for i in range(30)
    ]
    assert find_cut_index(items, 200_000) == 20
    tools = [
        ContextItem(
            f"t{i}", "tool", rendered="r", tokens=1_000, tool_name="ls", tool_call_id=f"c{i}"
        )
        for i in range(30)
    ]
    # Only tool items after the cut: the tail starts at the last turn boundary before it.
    assert (
        find_cut_index([*_texts(10, 1_000), *tools], 200_000, CutParams(keep_min_messages=0)) == 9
    )


def _steps(results: list[int]) -> list[ContextItem]:
    """A task, then one agent step per entry: an assistant call and its result of that many tokens."""
    items = [ContextItem("u", "user", rendered="task", tokens=20)]
    for i, tokens in enumerate(results):
        items.append(ContextItem(f"a{i}", "assistant", rendered="step", tokens=30))
        items.append(
            ContextItem(
                f"t{i}", "tool", rendered="out", tokens=tokens, tool_name="ls", tool_call_id=f"c{i}"
            )
        )
    return items


def test_a_last_step_over_the_tail_cap_still_lets_the_rest_fold():
    """At 16k a newest result over half the budget is the whole tail; everything before it folds.

    Before, the cut fell after the last item, found no turn boundary ahead and folded
    nothing: the emergency compaction was a no-op and the request was cut to fit.
    """
    items = _steps([400] * 10 + [4_500])
    cut = find_cut_index(items, 16_000, budget=6_560)
    assert items[cut].source_node_id == "a10"
    commit = ContextCommit("s", items=tuple(items))
    plan = plan_compaction(commit, 16_000, budget=8_000, fixed_tokens=1_440)
    assert not isinstance(plan, NothingToFold)
    assert plan.summarised_count == len(items) - 3 - 2


def test_attach_blocks_pair_by_source():
    """Open and close markers pair by their shared id, whatever their reason; an unclosed block runs to the end."""

    def marker(source, reason):
        return ContextItem(f"attach:s:{source}", "user", reason=reason, attached_from=source)

    items = [
        marker("c1", "attach_open"),
        marker("c2", "attach_open"),
        marker("c1", "compacted"),
        ContextItem("d", "user"),
        marker("c2", "attach_close"),
        marker("c3", "attach_open"),
        ContextItem("g", "user"),
    ]
    assert attach_blocks(items) == [(0, 2), (1, 4), (5, 6)]


@given(
    cut_views(),
    st.integers(1_000, 300_000),
    st.integers(0, 6),
    st.integers(0, 25),
    st.integers(0, 6),
)
def test_cut_never_inside_a_block(items, window, first, last, messages):
    """A cut that folds anything is a user item outside every block; the fold takes blocks whole."""
    params = CutParams(
        protect_first_n=first, protect_last_n=last, keep_min_messages=messages, keep_min_tokens=0
    )
    cut = find_cut_index(items, window, params)
    start, end = fold_bounds(items, window, params)
    assert min(first, len(items)) <= cut <= len(items)
    if min(first, len(items)) < cut < len(items):
        assert items[cut].role.value in {"user", "assistant"}
        if items[cut].role.value == "assistant":
            assert all(item.role.value != "user" for item in items[cut:])
    for open_, close in attach_blocks(items):
        assert cut == min(first, len(items)) or not open_ < cut <= close
        inside = set(range(open_, close + 1)) & set(range(start, end))
        assert inside in (set(), set(range(open_, close + 1)))


@given(cut_views(), st.integers(1_000, 100_000), st.integers(0, 4))
def test_plan_skips_locked_and_keeps_blocks_whole(items, window, first):
    """Invariant 4: a plan never folds a locked item, nor part of a block holding one."""
    commit = ContextCommit("s").with_items(items)
    params = CutParams(
        protect_first_n=first, protect_last_n=2, keep_min_tokens=0, keep_min_messages=1
    )
    plan = plan_compaction(commit, window, params)
    if isinstance(plan, NothingToFold):
        return
    folded = set(plan.positions)
    assert not any(items[p].locked for p in folded)
    for open_, close in attach_blocks(items):
        block = set(range(open_, close + 1))
        assert block & folded in (set(), block)
