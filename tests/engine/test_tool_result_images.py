"""An image a tool returned: the model never sees it, and ctxrules says so.

`add` warned of an image in a user message but not of one inside a ``tool_result`` block
(kept as ``[image]``), and `add_tool_result` with a list of blocks sent the image's base64
as JSON text without a word.
"""

from __future__ import annotations

import pytest

import ctxrules

IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}
USE = {"type": "tool_use", "id": "toolu_1", "name": "screenshot", "input": {}}


def _waiting() -> ctxrules.Context:
    ctx = ctxrules.Context(model="claude-sonnet-4-5")
    ctx.add({"role": "user", "content": "Take a screenshot."})
    ctx.add({"role": "assistant", "content": [USE]})
    return ctx


def test_an_image_inside_a_tool_result_block_warns() -> None:
    """The placeholder is what the model reads, and the warning names the image."""
    ctx = _waiting()
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": "Captured."}, IMAGE],
    }
    with pytest.warns(ctxrules.ContextWarning, match="type image .*will not see"):
        ctx.add({"role": "user", "content": [result]})
    sent = ctx.anthropic()["messages"][-1]["content"][0]  # type: ignore[index]
    assert sent["content"] == "Captured.\n[image]"


def test_add_tool_result_with_an_image_block_warns() -> None:
    """A list of blocks is sent as their JSON text, as documented; with an image, it says so."""
    ctx = _waiting()
    with pytest.warns(ctxrules.ContextWarning, match="'toolu_1' holds 1 block.* image"):
        ctx.add_tool_result("toolu_1", [{"type": "text", "text": "Captured."}, IMAGE])
