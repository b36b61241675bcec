"""The lists inside kept messages are read-only: changing one request never changes a later one.

A request's messages are the kept ones, shared with every later request (docs/performance.md,
"How a turn costs what is new"). The messages were read-only dicts, but an OpenAI message's
``tool_calls`` and an Anthropic middle turn's ``content`` were plain lists: appending to one
changed every later request. Now every list and dict in them refuses a change, loudly, and
is still a ``list`` (a ``dict``) to SDKs and a JSON array (object) to encoders.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from ctxrules.engine.context import Context
from ctxrules.render.openai import KeptList
from ctxrules.testing.responses import anthropic_response, openai_response
from ctxrules.tokens import HeuristicCounter


def _session(provider: str) -> tuple[Context, Callable[[], dict[str, Any]]]:
    """Six tasks, each a reply with two parallel calls and their results, then an answer."""
    model = "gpt-4o" if provider == "openai" else "claude-sonnet-4-5"
    ctx = Context(model=model, window=200_000, tokenizer=HeuristicCounter(), clock=lambda: 5.0)
    request = ctx.openai if provider == "openai" else ctx.anthropic
    respond = openai_response if provider == "openai" else anthropic_response
    for n in range(6):
        ctx.add({"role": "user", "content": f"task {n}: read both files"})
        request()
        calls = [(f"c{n}_{k}", "read_file", {"path": f"m{n}_{k}.py"}) for k in range(2)]
        reply = ctx.record(respond(2 * n, f"reading {n}", calls, (100, 0), model=model))
        for call in reply.tool_calls:
            ctx.add_tool_result(call.id, f"contents of {call.id}\n" * 3)
        request()
        ctx.record(respond(2 * n + 1, f"done {n}", [], (100, 0), model=model))
    return ctx, request


def _shared_lists(request: dict[str, Any], provider: str) -> list[list[Any]]:
    """The lists of a request that later requests share: tool calls, middle turns' content."""
    messages = request["messages"]
    if provider == "openai":
        return [m["tool_calls"] for m in messages if "tool_calls" in m]
    # The first and last turns of a request are built for it; the middle ones are kept.
    return [m["content"] for m in messages[1:-1] if isinstance(m["content"], list)]


def _changes(value: list[Any]) -> list[Callable[[], object]]:
    return [
        lambda: value.append({"type": "text", "text": "x"}),
        lambda: value.extend([1]),
        lambda: value.insert(0, 1),
        value.pop,
        lambda: value.remove(value[0]),
        value.clear,
        lambda: value.sort(key=str),
        value.reverse,
        lambda: value.__setitem__(0, {}),
        lambda: value.__delitem__(0),
        lambda: value.__iadd__([1]),
        lambda: value.__imul__(2),
    ]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_kept_list_refuses_every_change_and_later_requests_stay_the_same(provider: str) -> None:
    """Each change to a shared list or a dict inside it raises; the next request is byte-identical."""
    ctx, request = _session(provider)
    first = request()
    before = json.dumps(first, sort_keys=True)
    shared = _shared_lists(first, provider)
    assert len(shared) >= 4
    for value in shared:
        assert isinstance(value, list)
        for change in _changes(value):
            with pytest.raises(TypeError, match="shared with later requests"):
                change()
        inner = value[0]
        assert isinstance(inner, dict)
        with pytest.raises(TypeError, match="shared with later requests"):
            inner["id"] = "changed"
        nested = inner.get("function") or inner.get("input")
        if isinstance(nested, dict):
            with pytest.raises(TypeError, match="shared with later requests"):
                nested["name"] = "changed"
    assert json.dumps(first, sort_keys=True) == before
    assert json.dumps(request(), sort_keys=True) == before
    ctx.close()


def test_a_kept_list_serializes_and_copies_as_a_plain_list() -> None:
    """JSON, copies and pickles see a plain list; a copy is the caller's to change."""
    value = KeptList([{"id": "c1"}, 2])
    assert json.dumps(value) == json.dumps([{"id": "c1"}, 2])
    for copied in (copy.copy(value), copy.deepcopy(value), pickle.loads(pickle.dumps(value))):  # noqa: S301 - our own bytes
        assert type(copied) is list
        assert copied == value
        copied.append(3)
    assert value == [{"id": "c1"}, 2]
