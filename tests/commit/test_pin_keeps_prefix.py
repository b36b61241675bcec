"""A pin changes an item but not what it sends: the request after it extends the one before (cache legibility)."""

from __future__ import annotations

from ctxrules import Context
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.commit.diff import ChangeKind, diff_commits
from ctxrules.inspect.delta import delta
from ctxrules.telemetry.attributes import request_attributes
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter


def test_pinning_a_sent_message_is_not_a_cache_break() -> None:
    """The diff, the inspector's delta and the span all say the request after a pin extends the last."""
    ctx = Context(model="gpt-4o", window=200_000, tokenizer=HeuristicCounter())
    ctx.add({"role": "user", "content": "Standing rule: never push to main."})
    first = ctx.session.head
    assert first is not None
    for t in range(70):
        ctx.openai()
        reply = ctx.record(
            openai_response(t, f"step {t}", [(f"c{t}", "read_file", {"path": "a.py"})])
        )
        ctx.add_tool_result(reply.tool_calls[0].id, f"line {t}\n" * 20)
    ctx.openai()
    before = ctx.last
    assert before is not None
    ctx.pin(first)
    ctx.add({"role": "user", "content": "go on"})
    ctx.openai()
    after = ctx.last
    assert after is not None
    assert after.commit.items[0].pinned
    assert not before.commit.items[0].pinned
    diff = diff_commits(before.commit, after.commit)
    assert diff.extends, diff.changes[:3]
    assert [c.kind for c in diff.changes] == [ChangeKind.ADDED]
    assert diff.prefix_end == len(before.commit.items)
    assert delta(before.commit, after.commit).extends
    attributes, _ = request_attributes(after, before.commit, "v")
    assert attributes["ctxrules.prefix.break_position"] == -1


def test_a_change_of_text_still_breaks_the_prefix() -> None:
    """What is sent differs (new text, another state): the diff names the item and where the prefix ends."""
    item = ContextItem("n1", "tool", rendered="x" * 90, tokens=90, tool_name="read")
    before = ContextCommit("s").append_items([item, ContextItem("n2", "user", tokens=3)])
    aged = before.replace_items(
        {0: ContextItem("n1", "tool", State.AGED, "x", 1, tool_name="read")}
    )
    diff = diff_commits(before, aged)
    assert (diff.extends, diff.prefix_end, [c.kind for c in diff.changes]) == (
        False,
        0,
        [ChangeKind.TIGHTENED],
    )
