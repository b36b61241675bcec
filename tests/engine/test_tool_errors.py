"""A failed tool call's result tells Anthropic it failed (``is_error``), across reopens."""

from __future__ import annotations

from pathlib import Path

import pytest

import ctxrules
from ctxrules.commit import ContextItem
from ctxrules.commit.item import stored_item
from ctxrules.testing.responses import anthropic_response

pytest.importorskip("anthropic")

from ctxrules.testing.fake_sdk import FakeAnthropic


def _results(request: dict[str, object]) -> list[dict[str, object]]:
    return [
        block
        for message in request["messages"]  # type: ignore[attr-defined]
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


def test_a_failed_call_is_flagged_for_anthropic_and_not_for_openai(tmp_path: Path) -> None:
    """The flag is the node's error status: kept by the store, sent only where the API has it."""
    store = tmp_path / "s.db"
    ctx = ctxrules.Context("default", model="claude-sonnet-4-5", store=store)
    ctx.add({"role": "user", "content": "List src and tests."})
    ctx.anthropic()
    calls = [("t1", "ls", {"path": "src"}), ("t2", "ls", {"path": "tests"})]
    ctx.record(anthropic_response(1, "Listing.", calls))
    ctx.add_tool_result("t1", "ls: src: No such file or directory", is_error=True)
    ctx.add_tool_result("t2", "test_a.py")
    ctx.close()
    ctx = ctxrules.Context("default", model="claude-sonnet-4-5", store=store)
    request = ctx.anthropic()
    FakeAnthropic(["ok"]).messages.create(**request)
    assert [r.get("is_error") for r in _results(request)] == [True, None]
    assert all("is_error" not in m for m in ctx.openai()["messages"])  # type: ignore[operator, union-attr]


def test_an_item_stored_without_the_flag_reads_back_unflagged() -> None:
    """Items stored before the flag existed keep their stored form and digest."""
    item = ContextItem("n", "tool", rendered="ok", tool_name="ls", tool_call_id="t1")
    assert "is_error" not in item.to_json()
    failed = ContextItem(
        "n", "tool", rendered="no", tool_name="ls", tool_call_id="t1", is_error=True
    )
    assert failed.digest != item.digest
    assert stored_item(failed.to_json(), failed.digest) == failed
    assert stored_item(item.to_json(), item.digest).is_error is False
