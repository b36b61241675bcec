"""Snip trims only the outgoing request, keeps tool pairs whole, and gets it under the limit."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxrules.check import protocol_valid
from ctxrules.commit import ContextCommit, commit_to_json
from ctxrules.compaction import SNIP_MARKER, snip
from ctxrules.render import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    count_messages,
    render_commit,
)
from ctxrules.testing import context_items
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


@st.composite
def big_commits(draw: st.DrawFn) -> ContextCommit:
    """Commits with results of up to 20,000 characters, in every state."""
    items = draw(
        st.lists(
            context_items(tokenizer=RULER, huge=True),
            max_size=25,
            unique_by=lambda i: i.source_node_id,
        )
    )
    return ContextCommit("s").with_items(items)


@given(big_commits(), st.integers(0, 20_000))
def test_snip_fits_and_never_touches_the_commit(commit, limit):
    """Invariants 10 and 11 for the request: its count is exact, no tool result is orphaned, and it fits."""
    snapshot = commit_to_json(commit)
    messages = render_commit(commit)
    out = snip(messages, limit, RULER)
    floor = snip(messages, 0, RULER).tokens
    assert commit_to_json(commit) == snapshot
    assert render_commit(commit) == messages
    assert out.tokens == count_messages(out.messages, RULER)
    assert protocol_valid(out.messages) == []
    assert out.fits == (out.tokens <= limit)
    if limit >= floor:
        assert out.fits
    if count_messages(messages, RULER) <= limit:
        assert out.messages == messages
    system = [m for m in messages if m.role == "system"]
    assert [m for m in out.messages if m.role == "system"] == system
    if messages:
        assert out.messages[-1].role == messages[-1].role


def test_drops_oldest_units_first_and_keeps_pairs():
    """The oldest call-and-result unit goes first, whole; the task statement and the last unit stay."""
    messages = (
        Message("system", (TextBlock("Be brief."),)),
        Message("user", (TextBlock("task " * 50),)),
        Message("assistant", (ToolUseBlock("c1", "grep", '{"q": "x"}'),)),
        Message("tool", (ToolResultBlock("c1", "hit " * 200),)),
        Message("assistant", (TextBlock("found " * 50),)),
        Message("user", (TextBlock("next " * 20),)),
    )
    total = count_messages(messages, RULER)
    out = snip(messages, total - 100, RULER, keep_first=2)
    assert [m.role for m in out.messages] == ["system", "user", "assistant", "user"]
    assert out.dropped == 2
    assert out.fits


def test_shortens_a_single_huge_result_keeping_head_and_tail():
    """When dropping is not enough, the largest block keeps its head and tail around a marker."""
    huge = "BEGIN " + "data " * 20_000 + " END"
    messages = (
        Message("user", (TextBlock("read it"),)),
        Message("assistant", (ToolUseBlock("c1", "read_file", "{}"),)),
        Message("tool", (ToolResultBlock("c1", huge),)),
    )
    out = snip(messages, 2_000, RULER)
    assert out.fits
    assert out.shortened == 1
    result = out.messages[-1].blocks[0]
    assert isinstance(result, ToolResultBlock)
    assert result.text.startswith("BEGIN")
    assert result.text.endswith("END")
    assert SNIP_MARKER in result.text
    assert protocol_valid(out.messages) == []


def test_under_the_limit_is_untouched():
    """A request that fits is sent as it is."""
    messages = (Message("user", (TextBlock("hi"),)),)
    out = snip(messages, 100, RULER)
    assert (out.messages, out.dropped, out.shortened, out.fits) == (messages, 0, 0, True)
