"""The inspector's pure views: the diff, the requests, the occupancy record, the DAG's layout."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.commit import chunks_digest, items_digest
from ctxrules.commit.diff import ChangeKind, diff_commits
from ctxrules.commit.vector import CHUNK, ItemVector
from ctxrules.dag import Session
from ctxrules.engine.turn import changed_since
from ctxrules.inspect.layout import edges, node_kind, place
from ctxrules.inspect.views import occupancy_view, requests_of
from ctxrules.testing.commits import commits, context_items
from ctxrules.tokens.usage import ProviderUsage, UsageState


# Few examples: each hashes up to 200 items twice, and the lengths that matter (empty, one
# chunk, a chunk boundary, several chunks) come up in the first dozens.
@settings(max_examples=40)
@given(
    st.integers(0, 3 * CHUNK + 5).flatmap(
        lambda n: st.lists(context_items(), min_size=min(n, 3), max_size=3).map(
            lambda some: [*(ContextItem(f"n{i}", "user", tokens=i) for i in range(n)), *some]
        )
    )
)
def test_chunked_digest_equals_the_items_digest(items: list[ContextItem]) -> None:
    """Invariant 2 (content-addressed ids): a reader hashing chunk by chunk gets the same digest."""
    vector = ItemVector.of(items)
    memo: dict[tuple[int, int], tuple[object, int]] = {}
    assert chunks_digest(vector.chunks(), CHUNK, memo) == items_digest(items)
    # Read again through the memo: the same digest, from the kept shares.
    assert chunks_digest(vector.chunks(), CHUNK, memo) == items_digest(items)


def _tightened(item: ContextItem, reason: str) -> ContextItem:
    return ContextItem(
        item.source_node_id,
        item.role,
        State.AGED,
        rendered="[stub]",
        tokens=min(item.tokens, 2),
        reason=reason,
        attached_from=item.attached_from,
    )


@settings(max_examples=100)
@given(commits(max_items=12, states=(State.FULL,)), st.data())
def test_the_diff_names_every_change_by_rule(before: ContextCommit, data: st.DataObject) -> None:
    """Invariant 3 (monotone tightening) as the page shows it: each tightened item once, by its rule.

    The per-rule counts equal the engine's own `changed_since`, and tokens never grow.
    """
    positions = data.draw(st.sets(st.integers(0, max(len(before.items) - 1, 0))))
    reasons = data.draw(
        st.lists(
            st.sampled_from(["tail_window", "idle"]),
            min_size=len(positions),
            max_size=len(positions),
        )
    )
    changes = {
        p: _tightened(before.items[p], r)
        for p, r in zip(sorted(positions), reasons, strict=True)
        if p < len(before.items)
    }
    after = before.begin_generation().replace_items(changes)
    after = after.append_items([ContextItem("new_tail", "user", tokens=3)])
    diff = diff_commits(before, after)
    tightened = [c for c in diff.changes if c.kind is ChangeKind.TIGHTENED]
    assert sorted(c.position for c in tightened) == sorted(changes)
    assert [c.kind for c in diff.changes if c.position == len(before.items)] == [ChangeKind.ADDED]
    by_rule = {reason: tally.items for reason, tally in diff.by_rule().items()}
    assert Counter(by_rule) == changed_since(before, after)
    assert all(t.tokens_after <= t.tokens_before for t in diff.by_rule().values())
    assert diff.prefix_end == (min(changes) if changes else len(before.items))


def test_a_compaction_is_one_request_with_its_fold() -> None:
    """Two commits for one head (the prepared one, then the compacted one) are one request."""
    first = ContextCommit("s", head_node_id="u1").append_items(
        [ContextItem("u1", "user", tokens=40)]
    )
    grown = first.append_items([ContextItem("u2", "user", tokens=30)])
    grown = ContextCommit("s", parent_ids=(first.id,), head_node_id="u2").with_items(grown.items)
    folded = grown.replace_items(
        {0: ContextItem("u1", "user", State.SUMMARIZED, tokens=0, reason="compacted")}
    ).append_items([ContextItem("sm_1", "assistant", State.SUMMARY, tokens=5)])
    folded = ContextCommit("s", parent_ids=(grown.id,), head_node_id="u2").with_items(folded.items)
    requests = requests_of([first, grown, folded])
    assert [(r.index, r.steps, r.commit.id) for r in requests] == [
        (0, 1, first.id),
        (1, 2, folded.id),
    ]
    row = requests[1].diff
    assert (row.folded, row.added, row.tightened, row.summary_added) == (1, 2, 0, True)
    # Read again with the first request known: it is kept, the second rebuilt.
    again = requests_of([first, grown, folded], requests[:1])
    assert again[0] is requests[0]
    assert again[1].diff == requests[1].diff


def test_the_occupancy_record_adds_up() -> None:
    """The parts fill the window; measured when the usage measured this view, else estimated."""
    commit = ContextCommit("s", head_node_id="u").append_items(
        [
            ContextItem("u", "user", tokens=900),
            ContextItem("sm_1", "assistant", State.SUMMARY, tokens=100),
        ]
    )
    usage = UsageState().sent(8_000, 300, 200)
    estimated = occupancy_view(commit, usage, 200_000)
    assert estimated["basis"] == "estimated"
    assert estimated["total_used"] == estimated["estimated"] == 1_500
    assert sum(estimated["parts"].values()) == 8_000
    assert estimated["parts"]["summary"] == 100
    assert estimated["parts"]["history"] == 900
    measured = usage.record(ProviderUsage(1_400, 0, 250), estimated_request=1_500).as_cached()
    record = occupancy_view(commit, measured, 200_000)
    assert (record["basis"], record["total_used"], record["calibration"]) == (
        "measured",
        1_650,
        1.1,
    )
    after_compaction = measured.record_compaction()
    assert occupancy_view(commit, after_compaction, 200_000)["basis"] == "estimated"
    assert occupancy_view(commit, None, 32_000)["window_known"] is False


def test_retries_and_edits_open_lanes() -> None:
    """A retry and an edit of the same node each get a lane; the main line keeps lane 0."""
    s = Session("s").send("user", "hi").unwrap().send("assistant", "a").unwrap()
    answer = s.head
    s = s.retry(answer).unwrap().edit(answer, "b").unwrap()
    placed, lanes = place(s.graph)
    assert lanes == 3
    assert [p.lane for p in placed] == [0, 0, 1, 2]
    assert {kind for *_, kind in edges(s.graph)} == {"next"}


def test_a_merge_is_drawn_from_the_pointers_it_joined() -> None:
    """A merge of two peers: two attach pointers, the instruction, merge edges from both pointers."""
    peers = [
        ContextCommit(f"peer{n}", head_node_id=f"p{n}").append_items(
            [ContextItem(f"p{n}", "user", tokens=3)]
        )
        for n in (1, 2)
    ]
    s = Session("s").send("user", "start").unwrap().merge(peers, "Combine both.").unwrap()
    kinds = [node_kind(s.graph.nodes[i]) for i in s.graph.order]
    assert kinds == ["user", "attach", "attach", "merge"]
    merge = s.graph.order[-1]
    joined = sorted(a for a, b, kind in edges(s.graph) if kind == "merge" and b == merge)
    nexts = [a for a, b, kind in edges(s.graph) if kind == "next" and b == merge]
    assert sorted([*joined, *nexts]) == sorted(s.graph.order[1:3])
