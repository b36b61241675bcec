"""Invariant 16 in summaries: a folded call's arguments never quote a handle that may resolve to nothing."""

from __future__ import annotations

import json
from typing import Any

import ctxrules
from ctxrules.check.recoverable import recoverable
from ctxrules.commit import ContextItem
from ctxrules.compaction.plan import structural_line
from ctxrules.spec.recall import RecallOptions


def _response(n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"c{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}]}


def test_a_structural_line_shows_no_handle_from_the_arguments() -> None:
    """Invariant 16: the line keeps the call's other arguments and ends with its own handle."""
    item = ContextItem("n1", "tool", rendered="[no item has the handle asked for]", tool_name="recall",
                       arguments='{"handle": "h:zzzzzzzz", "page": 2}')  # fmt: skip
    for hints in (True, False):
        line = structural_line(item, hints=hints)
        assert "h:zzzzzzzz" not in line
        assert '"page": 2' in line or '"page":2' in line


def test_a_bad_recall_folded_at_a_small_window_leaves_every_shown_handle_resolving() -> None:
    """Invariant 16: at 8k a recall of a made-up handle is folded, and the summary names no dead handle."""
    ctx = ctxrules.Context("default", model="gpt-4o", window=8000, recall=RecallOptions(tools=True))
    ctx.add({"role": "user", "content": "go"})
    for n in range(1, 60):
        if n % 5 == 0:
            ctx.openai()
            asked = ctx.record(_response(1000 + n, "recall", {"handle": "h:zzzzzzzz"}))
            ctx.answer_recall(asked.tool_calls[0])
        ctx.openai()
        ctx.record(_response(n, "grep", {"q": n}))
        ctx.add_tool_result(
            f"c{n}", "".join(f"src/m{n}/f{j}.py: def fn_{n}_{j}(): pass\n" for j in range(60))
        )
    ctx.openai()
    prep = ctx.last
    assert prep is not None
    assert any(item.state.value == "summary" for item in prep.commit.items)
    assert [v for v in recoverable(prep.commit, ctx.session.graph) if "zzzzzzzz" in str(v)] == []
