"""Exact behaviour of ``render/`` that a mutation run found untested.

Where `to_anthropic` puts the newest cache breakpoint, and the one ruler (invariant 10):
an item's tokens are those of its rendering.
"""

from __future__ import annotations

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.render import counted, render_commit, to_anthropic
from ctxrules.render.item import item_tokens
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()


def _commit() -> ContextCommit:
    texts = [("a", "user", "hi"), ("b", "assistant", "yo"), ("c", "user", "more")]
    return ContextCommit("s").append_items(
        [counted(ContextItem(n, role, rendered=text), RULER) for n, role, text in texts]
    )


def test_the_newest_breakpoint_is_on_the_last_block_only() -> None:
    """With ``cache_newest`` exactly the last block of the request carries a cache breakpoint."""
    request = to_anthropic(render_commit(_commit()), cache_newest=True)
    blocks = [block for message in request.messages for block in message["content"]]
    marked = [i for i, block in enumerate(blocks) if "cache_control" in block]
    assert marked == [len(blocks) - 1]
    assert blocks[-1]["cache_control"] == {"type": "ephemeral"}


def test_an_items_tokens_are_those_of_its_rendering() -> None:
    """Invariant 10: ``item_tokens`` counts what `counted` records for the item."""
    item = ContextItem("t", "tool", rendered="x " * 50, tool_name="grep", tool_call_id="c1")
    assert item_tokens(item, RULER) == counted(item, RULER).tokens > 0
