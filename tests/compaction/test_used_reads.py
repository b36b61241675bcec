"""A compaction keeps the stubs of the newest file reads the assistant used out of the fold."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxrules.check import protocol_valid
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.compaction import CompactionPlan, CutParams, Outcome, compact, plan_compaction
from ctxrules.compaction.plan import used_reads
from ctxrules.render import counted, render_commit
from ctxrules.rules import Facts
from ctxrules.testing.compaction import FakeSummarizer
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _stub(i: int, tool: str = "Read", arguments: str = "") -> ContextItem:
    """An aged result whose stub names ``handler_i`` and ``dispatch_i`` (and its padding)."""
    text = f"[tool {tool}] output: | names: handler_{i}, dispatch_{i}, " + "filler_word_x, " * 40
    return counted(
        ContextItem(
            f"t{i}",
            "tool",
            state=State.AGED,
            reason="tail_window",
            rendered=text,
            tool_name=tool,
            tool_call_id=f"c{i}",
            arguments=arguments or f'{{"file_path": "/repo/cmd/hooks_{i}.go"}}',
            turn=i,
        ),
        RULER,
    )


def _said(node: str, text: str, turn: int) -> ContextItem:
    return counted(ContextItem(node, "assistant", rendered=text, turn=turn), RULER)


def _session(
    used: tuple[int, ...], *, tool: str = "Read", arguments: str = ""
) -> list[ContextItem]:
    """Six reads, then the assistant writing two names of each read in ``used``, then a tail."""
    items = [_said("a0", "reading the hooks", 0)]
    items += [_stub(i, tool, arguments) for i in range(6)]
    items += [_said(f"w{i}", f"Now handler_{i} calls dispatch_{i}.", 7 + i) for i in used]
    items += [_said(f"z{t}", f"step {t}", t) for t in range(20, 30)]
    return items


def _folded(items: list[ContextItem], window: int = 32_000, keep: int = 2) -> set[str]:
    commit = ContextCommit("s").with_items(items)
    params = CutParams(
        keep_min_tokens=0,
        keep_recent_tokens=10,
        protect_last_n=1,
        keep_min_messages=1,
        protect_first_n=1,
        keep_used_reads=keep,
    )
    plan = plan_compaction(commit, window, params)
    assert isinstance(plan, CompactionPlan)
    return {commit.items[p].source_node_id for p in plan.positions}


def test_the_newest_used_reads_stay_out_of_the_fold() -> None:
    """Reads 1, 3 and 4 were used after they arrived: 3 and 4 stay, 1 and the unused ones fold."""
    folded = _folded(_session((1, 3, 4)))
    assert {"t3", "t4"}.isdisjoint(folded)
    assert {"t0", "t1", "t2", "t5"} <= folded
    # The old behaviour, and what keep_used_reads = 0 still gives: every read folds.
    assert {f"t{i}" for i in range(6)} <= _folded(_session((1, 3, 4)), keep=0)


def test_a_commands_output_or_an_unused_read_folds() -> None:
    """Only a file read counts: a used command's output folds, as does a read nobody used."""
    assert {f"t{i}" for i in range(6)} <= _folded(
        _session((3, 4), tool="bash", arguments='{"command": "go test ./..."}')
    )
    assert {f"t{i}" for i in range(6)} <= _folded(_session(()))


def test_one_name_or_use_before_the_read_does_not_count() -> None:
    """Two distinct names written after the read: one name, or both before it, fold it."""
    items = _session(())
    items.insert(1, _said("early", "handler_4 calls dispatch_4", 0))
    items.insert(-10, _said("one", "only handler_3 here", 12))
    assert {f"t{i}" for i in range(6)} <= _folded(items)


@pytest.mark.parametrize("window", [8_000, 16_000])
def test_a_small_window_folds_them(window: int) -> None:
    """Under a 16,000-token input budget the fold keeps nothing back: its room is too small."""
    assert {"t3", "t4"} <= _folded(_session((3, 4)), window)


@given(
    used=st.sets(st.integers(0, 5)),
    keep=st.integers(0, 6),
    start=st.integers(0, 7),
    cut=st.integers(0, 20),
)
def test_at_most_keep_reads_in_the_range_are_kept(
    used: set[int], keep: int, start: int, cut: int
) -> None:
    """Invariant 13's fold stays bounded: at most ``keep`` positions, each a used read in range."""
    view = _session(tuple(sorted(used)))
    kept = used_reads(view, start, cut, keep)
    assert len(kept) <= keep
    assert all(start <= j < cut and view[j].tool_name == "Read" for j in kept)
    assert {view[j].source_node_id for j in kept} <= {f"t{i}" for i in used}


def _compacted(used: set[int], keep: int, tail: int) -> ContextCommit:
    commit = ContextCommit("s").with_items(_session(tuple(sorted(used))))
    params = CutParams(
        keep_min_tokens=0,
        keep_recent_tokens=tail,
        protect_last_n=1,
        keep_min_messages=1,
        protect_first_n=1,
        keep_used_reads=keep,
    )
    facts = Facts(now=5.0, context_window=32_000, tokenizer=RULER)
    result = compact(commit, FakeSummarizer("ok"), facts, params=params)
    assert result.outcome in (Outcome.FINISHED, Outcome.NO_OP)
    return result.commit


@given(used=st.sets(st.integers(0, 5)), keep=st.integers(0, 4), tail=st.integers(0, 300))
def test_a_compaction_that_keeps_reads_back_stays_valid(
    used: set[int], keep: int, tail: int
) -> None:
    """Invariants 11, 12 and 13: a valid request, one summary, every item shown or folded into it.

    Against the same compaction keeping nothing back, what stays in view besides is at most
    ``keep`` reads, each one the assistant used.
    """
    after = _compacted(used, keep, tail)
    assert protocol_valid(render_commit(after)) == []
    summaries = [i for i in after.items if i.state is State.SUMMARY]
    assert len(summaries) <= 1
    for item in after.items:
        assert item.visible or (summaries and item.merged_into == summaries[0].source_node_id)
    shown = {i.source_node_id for i in after.items if i.visible and i.state is not State.SUMMARY}
    plain = _compacted(used, 0, tail)
    before = {i.source_node_id for i in plain.items if i.visible and i.state is not State.SUMMARY}
    assert before <= shown
    assert len(shown - before) <= keep
    assert shown - before <= {f"t{i}" for i in used}
