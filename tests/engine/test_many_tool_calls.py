"""Replies with many parallel tool calls, and tool calls a response gets wrong (issue 33 items 11, 12).

Each ``add_tool_result`` scanned every running call (~4 ms at 10k, so 10k results took
over 30 s); it now looks its call up. A Responses ``function_call`` without ``call_id``
became a call with id ``"None"``, two calls with one id were accepted and their results
paired in set order, and an SDK object whose ``model_dump`` raised let that exception out
of ``record``: each is now an `InputError` that changes nothing.
"""

from __future__ import annotations

import pyrsistent
import pytest

from ctxrules.engine.context import Context, InputError
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter


def _context() -> Context:
    ctx = Context(model="gpt-4o", window=16_000, tokenizer=HeuristicCounter(), clock=lambda: 1.0)
    ctx.add({"role": "user", "content": "Read every file."})
    ctx.openai()
    return ctx


def test_a_tool_result_looks_up_its_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """With 2,000 calls waiting, each result reads a few nodes, not all the running ones."""
    ctx = _context()
    calls = [(f"c{i}", "read", {"i": i}) for i in range(2_000)]
    reply = ctx.record(openai_response(1, "Reading.", calls, (10, 0)))
    ctx.add_tool_result(reply.tool_calls[0].id, "first")  # the index is built once here
    lookups = [0]
    original = pyrsistent.PMap.__getitem__

    def counting(self: pyrsistent.PMap[str, object], key: str) -> object:
        lookups[0] += 1
        return original(self, key)

    monkeypatch.setattr(pyrsistent.PMap, "__getitem__", counting)
    for call in reply.tool_calls[1:201]:
        ctx.add_tool_result(call.id, "done")
    monkeypatch.undo()
    assert lookups[0] <= 200 * 60, lookups[0]
    assert len(ctx.session.running) == 2_000 - 201


def _responses(*items: dict[str, object]) -> dict[str, object]:
    return {"object": "response", "output": list(items), "usage": {"input_tokens": 10}}


def test_a_function_call_without_a_call_id_is_refused() -> None:
    """No call with id "None": the response is unreadable and nothing is added."""
    ctx = _context()
    before = len(ctx.session.graph)
    call = {"type": "function_call", "name": "read", "arguments": "{}"}
    with pytest.raises(InputError, match="call_id"):
        ctx.record(_responses(call))
    assert len(ctx.session.graph) == before


def test_two_calls_with_one_id_are_refused() -> None:
    """In one reply, or a new call reusing the id of one still waiting: refused, nothing added."""
    ctx = _context()
    before = len(ctx.session.graph)
    twice = [("c1", "read", {"i": 1}), ("c1", "read", {"i": 2})]
    with pytest.raises(InputError, match="twice"):
        ctx.record(openai_response(1, "Reading.", twice, (10, 0)))
    assert len(ctx.session.graph) == before
    ctx.record(openai_response(1, "Reading.", [("c1", "read", {})], (10, 0)))
    after = len(ctx.session.graph)
    with pytest.raises(InputError, match="already waiting"):
        ctx.record(openai_response(2, "Again.", [("c1", "read", {})], (10, 0)))
    assert len(ctx.session.graph) == after


class _Broken:
    def model_dump(self, **_: object) -> dict[str, object]:
        raise RuntimeError("the SDK object is broken")


def test_an_sdk_object_whose_model_dump_raises_is_an_input_error() -> None:
    """The exception stays inside: `record` and `add` raise `InputError` naming it."""
    ctx = _context()
    with pytest.raises(InputError, match="model_dump raised RuntimeError"):
        ctx.record(_Broken())
    with pytest.raises(InputError, match="model_dump raised RuntimeError"):
        ctx.add(_Broken())
