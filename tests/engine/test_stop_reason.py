"""`Reply.stop_reason`: a reply cut by the output limit is told apart from a final answer."""

from __future__ import annotations

import asyncio

import ctxrules
from ctxrules.testing.responses import anthropic_response, openai_response


def _context() -> ctxrules.Context:
    ctx = ctxrules.Context("default", model="claude-sonnet-4-5")
    ctx.add({"role": "user", "content": "Write the parser."})
    return ctx


def test_each_providers_stop_reason_is_read() -> None:
    """Anthropic's stop_reason, Chat Completions' finish_reason, a Responses result's status."""
    cut = {**anthropic_response(1, "def parse(text):"), "stop_reason": "max_tokens"}
    assert _context().record(cut).stop_reason == "max_tokens"
    chat = openai_response(1, "def parse(")
    chat["choices"][0]["finish_reason"] = "length"
    assert _context().record(chat).stop_reason == "length"
    responses = {
        "output": [{"type": "message", "content": [{"type": "output_text", "text": "def"}]}],
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
    }
    reply = _context().record(responses)
    assert (reply.text, reply.stop_reason) == ("def", "max_output_tokens")


def test_a_finished_reply_says_so_and_async_too() -> None:
    """A loop can stop on ``end_turn`` and go on (or raise max_tokens) on ``max_tokens``."""
    done = _context().record(anthropic_response(1, "Done."))
    assert (done.tool_calls, done.stop_reason) == ((), "end_turn")
    calls = anthropic_response(2, "Reading.", [("t1", "read_file", {"path": "a.py"})])
    reply = asyncio.run(_context().arecord(calls))
    assert reply.stop_reason == "tool_use"
    assert _context().record({"type": "message", "content": []}).stop_reason is None
