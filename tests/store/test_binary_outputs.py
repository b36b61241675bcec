"""Tool outputs that are binary read as text (NUL and control bytes) are stored and read back.

The soak's PostgreSQL run failed at call 107 and on every call after it: a backtick span
of a binary output, NUL included, became a word of the reference tracker, and PostgreSQL
refuses a NUL in a text column. A quoted name is printable now.
"""

from __future__ import annotations

from ctxrules.engine.context import Context
from ctxrules.rules.references import distinctive_substrings
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

BINARY = "ELF\x02\x01\x00 `X=\x18\x9e8Un\x00\x19wW` and `run_all()` " + "\x00\x7f\x1b" * 300


def _context(store_url: str, session: str) -> Context:
    return Context(
        model="gpt-4o",
        store=store_url,
        session=session,
        clock=lambda: 0.0,
        tokenizer=HeuristicCounter(),
    )


def test_a_backtick_span_of_control_bytes_is_no_reference() -> None:
    """Printable spans are kept, spans holding control bytes are not."""
    found = distinctive_substrings("see `a\x00bcd` and `run_all()` and `x\x1b[0m`")
    assert "run_all()" in found
    assert not [value for value in found if not value.isprintable()]


def test_binary_tool_outputs_are_stored_and_read_back(store_url: str) -> None:
    """Three turns of binary outputs: no store failure, and the outputs come back byte for byte."""
    ctx = _context(store_url, "bin")
    ctx.add({"role": "user", "content": "read the binaries"})
    for turn in range(3):
        ctx.openai()
        ctx.record(openai_response(turn, "reading", [(f"c{turn}", "read_file", {"path": "a.bin"})]))
        ctx.add_tool_result(f"c{turn}", f"{turn}{BINARY}")
    request = ctx.openai()
    ctx.close()
    again = _context(store_url, "bin")
    outputs = [
        again.session.graph.nodes[node].output
        for node in again.session.graph.order
        if again.session.graph.nodes[node].name == "read_file"
    ]
    assert outputs == [f"{turn}{BINARY}" for turn in range(3)]
    assert again.openai() == request
    again.close()


def test_a_tool_call_whose_arguments_hold_a_nul_is_stored(store_url: str) -> None:
    r"""A call's arguments with NUL (and an escaped backslash before ``u0000``) store and resume.

    PostgreSQL's indexes read a node's fields as ``jsonb``, which refuses the ``\u0000``
    escape: the turn's write failed (``unsupported Unicode escape sequence``).
    """
    arguments = {"pattern": "a\x00b", "raw": "\\u0000 and \\\\u0000", "bytes": BINARY}

    ctx = _context(store_url, "nul-args")
    ctx.add({"role": "user", "content": "grep for it"})
    ctx.openai()
    ctx.record(openai_response(0, "searching", [("c0", "grep", arguments)]))
    ctx.add_tool_result("c0", "found 3")
    ctx.record(openai_response(1, "again", [("c1", "grep", {"pattern": "\x00"})]))
    ctx.add_tool_result("c1", "found 1")
    request = ctx.openai()
    ctx.close()
    again = _context(store_url, "nul-args")
    calls = [
        again.session.graph.nodes[node]
        for node in again.session.graph.order
        if again.session.graph.nodes[node].name == "grep"
    ]
    assert [call.output for call in calls] == ["found 3", "found 1"]
    assert again.openai() == request
    again.close()
