"""Content that is not text: the model reads a placeholder, and `add` says so."""

from __future__ import annotations

import warnings

import pytest

import ctxrules

IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}
IMAGE_URL = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}


@pytest.mark.parametrize("block", [IMAGE, IMAGE_URL], ids=["anthropic", "openai"])
def test_an_image_is_a_placeholder_and_add_warns(block: dict[str, object]) -> None:
    """The warning names the block's type; the request holds the placeholder, not the data."""
    ctx = ctxrules.Context("default", model="gpt-4o")
    with pytest.warns(ctxrules.ContextWarning, match=f"type {block['type']} .*will not see"):
        ctx.add({"role": "user", "content": [{"type": "text", "text": "What is this?"}, block]})
    sent = ctx.openai()["messages"][-1]["content"]  # type: ignore[index]
    assert sent == f"What is this?\n[{block['type']}]"
    assert "iVBO" not in str(sent)


def test_text_blocks_and_tool_results_add_without_a_warning() -> None:
    """Only blocks the model would not see warn: text, tool uses and results are read whole."""
    ctx = ctxrules.Context("default", model="claude-sonnet-4-5")
    use = {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ctx.add({"role": "user", "content": [{"type": "text", "text": "List."}]})
        ctx.add({"role": "assistant", "content": [{"type": "text", "text": "Listing."}, use]})
        ctx.add(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}],
            }
        )
    assert ctx.anthropic()["messages"][-1]["content"][0]["content"] == "a.py"  # type: ignore[index]
