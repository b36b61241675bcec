"""A provider that reuses tool call ids, and a `Context` used after `close`.

Some OpenAI-compatible servers number every reply's calls from ``call_0``. `Context` used
to record the second ``call_0`` as it came, and every later request that showed both
calls sent them as text (and `ctxrules verify` flagged the requests, invariant 11).
"""

from __future__ import annotations

import asyncio
import json
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

from ctxrules.cli.main import main
from ctxrules.dag.call_ids import PROVIDER_CALL_ID, CallIds
from ctxrules.engine.context import (
    ConfigError,
    Context,
    ContextBusy,
    ContextClosed,
    ContextWarning,
    InputError,
)
from ctxrules.tokens import HeuristicCounter


def _reply(calls: list[str], text: str | None = None) -> dict[str, Any]:
    """A Chat Completions response (as a dict) whose calls have the ids ``calls``."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": c, "type": "function", "function": {"name": "run", "arguments": "{}"}}
            for c in calls
        ]
    return {
        "id": "r",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
    }


def _anthropic_reply(ids: list[str]) -> dict[str, Any]:
    return {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": i, "name": "run", "input": {}} for i in ids],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }


def _context(**options: Any) -> Context:
    return Context(
        model=options.pop("model", "gpt-4o"),
        tokenizer=HeuristicCounter(),
        clock=options.pop("clock", lambda: 1_000.0),
        **options,
    )


def _openai_pairs(request: dict[str, Any]) -> list[str]:
    """The call ids the request sends as calls, each checked to be answered right after."""
    messages = request["messages"]
    ids: list[str] = []
    for index, message in enumerate(messages):
        assert "[tool call" not in str(message.get("content") or "")
        for call in message.get("tool_calls") or ():
            ids.append(call["id"])
            answers = [m["tool_call_id"] for m in messages[index + 1 :] if m["role"] == "tool"]
            assert call["id"] in answers
    return ids


def test_a_reused_id_is_recorded_fresh_and_every_request_sends_real_calls(
    tmp_path: Path,
) -> None:
    """A server reusing ids, reopened every 7 turns: every request sends real, paired calls."""
    store = tmp_path / "s.sqlite"
    ctx = _context(store=str(store), session="loop")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        for turn in range(30):
            if turn and turn % 7 == 0:
                ctx.close()
                ctx = _context(store=str(store), session="loop")
            ctx.add({"role": "user", "content": f"question {turn}"})
            ctx.openai()
            reply = ctx.record(_reply(["call_0", "call_1"]))
            # One result by the id the reply carries, one by the id the provider sent.
            ctx.add_tool_result(reply.tool_calls[0].id, f"first result {turn}")
            ctx.add_tool_result("call_1", f"second result {turn}")
            ids = _openai_pairs(ctx.openai())
            assert len(ids) == len(set(ids)) == 2 * (turn + 1)
            ctx.record(_reply([], text=f"answer {turn}"))
    ctx.close()
    # Said once per Context: the first one, then once after each reopen.
    texts = [str(w.message) for w in said if w.category is ContextWarning]
    assert len(texts) == 5
    assert all("reused tool call id 'call_0'" in text for text in texts)
    assert main(["verify", str(store), "--session", "loop", "--tokenizer", "heuristic"]) == 0


def test_the_renamed_call_keeps_the_providers_id_and_answers_to_either() -> None:
    """The node keeps the id the provider sent; a result under it reaches the renamed call."""
    ctx = _context()
    ctx.add({"role": "user", "content": "go"})
    first = ctx.record(_reply(["call_0"]))
    ctx.add_tool_result("call_0", "one")
    with pytest.warns(ContextWarning):
        second = ctx.record(_reply(["call_0"]))
    assert [c.id for c in first.tool_calls] == ["call_0"]
    assert [c.id for c in second.tool_calls] == ["call_0_2"]
    node = ctx.session.graph.nodes[ctx.session.graph.callees_of(ctx.session.head or "")[-1]]
    assert node.metadata == {"tool_call_id": "call_0_2", PROVIDER_CALL_ID: "call_0"}
    ctx.add_tool_result("call_0", "two")  # the provider's id reaches the renamed call
    assert not ctx.session.running
    with pytest.raises(InputError, match="no tool call 'call_0' is waiting"):
        ctx.add_tool_result("call_0", "three")


def test_an_id_still_waiting_or_twice_in_one_reply_is_refused_before_any_change() -> None:
    """Which call a result is for could not be told: refused, the session unchanged."""
    ctx = _context()
    ctx.add({"role": "user", "content": "go"})
    ctx.record(_reply(["call_0"]))
    before = ctx.session
    with pytest.raises(InputError, match="'call_0' is already waiting"):
        ctx.record(_reply(["call_0"]))
    ctx.add_tool_result("call_0", "done")
    after = ctx.session
    with pytest.raises(InputError, match="'call_7' appears twice in the reply"):
        ctx.record(_reply(["call_7", "call_7"]))
    assert before.head == after.head
    assert ctx.session is after


def test_an_anthropic_request_sends_reused_ids_as_distinct_tool_uses() -> None:
    """The same on the Anthropic path: every tool_use has its own id and its result."""
    ctx = _context(model="claude-sonnet-4-5")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ContextWarning)
        for turn in range(4):
            ctx.add({"role": "user", "content": f"question {turn}"})
            ctx.anthropic()
            reply = ctx.record(_anthropic_reply(["toolu_1"]))
            ctx.add_tool_result(reply.tool_calls[0].id, f"result {turn}")
    request = ctx.anthropic()
    uses = [
        block["id"]
        for message in request["messages"]
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ]
    results = [
        block["tool_use_id"]
        for message in request["messages"]
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert uses == results == ["toolu_1", "toolu_1_2", "toolu_1_3", "toolu_1_4"]
    assert "[tool call" not in json.dumps(request)


def test_close_is_idempotent_and_every_call_after_it_says_the_context_is_closed(
    tmp_path: Path,
) -> None:
    """Closing twice does nothing; any other call after it raises `ContextClosed`."""
    ctx = _context(store=str(tmp_path / "s.sqlite"), session="x")
    ctx.add({"role": "user", "content": "q"})
    ctx.openai()
    ctx.close()
    ctx.close()
    assert ctx.closed
    calls = {
        "add": lambda: ctx.add({"role": "user", "content": "q2"}),
        "add_tool_result": lambda: ctx.add_tool_result("c", "r"),
        "openai": ctx.openai,
        "anthropic": ctx.anthropic,
        "record": lambda: ctx.record(_reply([], text="a")),
        "pin": ctx.pin,
        "reload": ctx.reload,
    }
    for name, call in calls.items():
        with pytest.raises(ContextClosed, match=r"this Context is closed.*session='x'"):
            call()
        assert name
    with _context() as block:
        block.add({"role": "user", "content": "q"})
    with pytest.raises(ContextClosed):
        block.add({"role": "user", "content": "again"})


@pytest.mark.parametrize(
    ("method", "key"),
    [("openai", "messages"), ("openai", "tools"), ("anthropic", "system"), ("anthropic", "tools")],
)
def test_extra_keys_never_replace_what_the_request_was_counted_with(method: str, key: str) -> None:
    """``openai(messages=[])`` would send what Context never counted: refused before any change."""
    ctx = _context(model="claude-sonnet-4-5" if method == "anthropic" else "gpt-4o")
    ctx.add({"role": "user", "content": "q"})
    with pytest.raises(InputError, match=rf"{method}\({key}=\.\.\.\): .* add messages with add"):
        getattr(ctx, method)(**{key: []})
    assert ctx.last is None
    assert getattr(ctx, method)(temperature=0.2)["temperature"] == 0.2


def test_pin_and_unpin_say_which_they_were_asked() -> None:
    """The error names the verb asked for, and an empty session says it is empty."""
    ctx = _context()
    with pytest.raises(
        InputError, match="the session is empty: add a message before asking to pin"
    ):
        ctx.pin()
    ctx.add({"role": "user", "content": "q"})
    with pytest.raises(InputError, match="no message 'bogus' in this session to unpin"):
        ctx.unpin("bogus")


class _CountingSet(set[str]):
    """A set that counts the lookups made in it."""

    probes = 0

    def __contains__(self, item: object) -> bool:
        type(self).probes += 1
        return super().__contains__(item)


def test_an_id_reused_on_every_reply_costs_the_same_on_the_thousandth() -> None:
    """Each fresh id is found in O(1) lookups, not by walking the suffixes given before."""
    used = _CountingSet()
    ids = CallIds(used)
    given = [ids.record("call_0") for _ in range(2_000)]
    assert len(set(given)) == 2_000
    assert given[-1] == "call_0_2000"
    assert _CountingSet.probes <= 2 * 2_000


def test_two_requests_at_once_are_built_one_after_the_other(tmp_path: Path) -> None:
    """``gather(ctx.aopenai(), ctx.aopenai())`` raced on the session: one failed as moved."""
    store = tmp_path / "s.sqlite"

    async def loop() -> list[BaseException]:
        ctx = _context(store=str(store), session="s")
        failed: list[BaseException] = []
        for turn in range(40):
            ctx.add({"role": "user", "content": f"step {turn} " + "y" * 2_000})
            both = await asyncio.gather(ctx.aopenai(), ctx.aopenai(), return_exceptions=True)
            failed += [r for r in both if isinstance(r, BaseException)]
            assert both[0] == both[1]
            reply = await ctx.arecord(_reply([f"c{turn}"]))
            ctx.add_tool_result(reply.tool_calls[0].id, "out " + "z" * 3_000)
        ctx.close()
        return failed

    assert asyncio.run(loop()) == []
    assert main(["verify", str(store), "--tokenizer", "heuristic"]) == 0


def test_results_added_from_many_threads_at_once_all_land() -> None:
    """Tools run in threads, each adding its result as it ends: none is lost or refused."""
    ctx = _context()
    ctx.add({"role": "user", "content": "go"})
    reply = ctx.record(_reply([f"c{n}" for n in range(8)]))
    start = threading.Barrier(8)

    def answer(call_id: str) -> None:
        start.wait()
        ctx.add_tool_result(call_id, f"result of {call_id}")

    threads = [threading.Thread(target=answer, args=(c.id,)) for c in reply.tool_calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not ctx.session.running
    graph = ctx.session.graph
    outputs = sorted(graph.nodes[c].output for c in graph.callees_of(ctx.session.head or ""))
    assert outputs == sorted(f"result of c{n}" for n in range(8))


def test_a_call_on_the_event_loop_while_a_thread_runs_one_says_so() -> None:
    """Waiting there could wait for the loop itself: `ContextBusy`, not a hang."""
    inside, go_on = threading.Event(), threading.Event()

    def clock() -> float:
        if threading.current_thread() is not threading.main_thread() and not go_on.is_set():
            inside.set()
            go_on.wait(10)
        return 1_000.0

    async def loop() -> None:
        ctx = _context(clock=clock)
        go_on.set()
        ctx.add({"role": "user", "content": "q"})
        go_on.clear()
        running = asyncio.ensure_future(ctx.aopenai())
        await asyncio.to_thread(inside.wait, 10)
        with pytest.raises(ContextBusy, match="another call on this Context is running"):
            ctx.add({"role": "user", "content": "too soon"})
        go_on.set()
        assert (await running)["messages"] == [{"role": "user", "content": "q"}]

    asyncio.run(loop())


def test_a_window_past_any_models_is_a_config_error() -> None:
    """``window=10**20`` made every budget a meaningless number; the CLI refused it already."""
    with pytest.raises(ConfigError, match=r"window=100000000000000000000: .* at most 10,000,000"):
        _context(window=10**20)
    assert _context(window=10_000_000).window == 10_000_000


def test_a_rule_that_raises_is_a_config_error_naming_it() -> None:
    """The spec's own code failing inside `openai()` is a ContextError that names the rule."""
    from ctxrules.rules import NamedRule, Pipeline  # noqa: PLC0415 - only this test builds one

    def boom(commit: object, facts: object) -> object:  # noqa: ARG001 - a Rule
        raise RuntimeError("too long")

    ctx = _context(spec=Pipeline((NamedRule("boom", boom),)))  # type: ignore[arg-type]
    ctx.add({"role": "user", "content": "q"})
    with pytest.raises(ConfigError, match=r"rule 'boom' raised RuntimeError: too long") as raised:
        ctx.openai()
    assert isinstance(raised.value.__cause__, RuntimeError)


@pytest.mark.parametrize("reopen", [False, True])
def test_a_result_that_comes_after_a_request_is_in_every_later_one(
    tmp_path: Path, reopen: bool
) -> None:
    """A request built while a call waited kept its result empty in every later request."""
    store = str(tmp_path / "s.sqlite")
    ctx = _context(store=store, session="s")
    ctx.add({"role": "user", "content": "q"})
    ctx.openai()
    ctx.record(_reply(["c1", "c2"]))
    ctx.add_tool_result("c1", "FIRST RESULT")
    early = ctx.openai()["messages"]
    assert [m.get("content") for m in early if m["role"] == "tool"] == ["FIRST RESULT", ""]
    if reopen:
        ctx.close()
        ctx = _context(store=store, session="s")
    ctx.add_tool_result("c2", "SECOND RESULT")
    results = [m.get("content") for m in ctx.openai()["messages"] if m["role"] == "tool"]
    assert results == ["FIRST RESULT", "SECOND RESULT"]
    ctx.record(_reply([], text="answer"))
    ctx.add({"role": "user", "content": "next"})
    later = [m.get("content") for m in ctx.openai()["messages"] if m["role"] == "tool"]
    assert later == ["FIRST RESULT", "SECOND RESULT"]
    ctx.close()
    assert main(["verify", store, "--tokenizer", "heuristic"]) == 0


def test_a_warning_of_an_async_call_points_at_the_callers_line() -> None:
    """`arecord` runs in a worker thread; its `ContextWarning` names the line that awaited it."""
    ctx = Context(model="gpt-4o", tokenizer=HeuristicCounter())
    ctx.add({"role": "user", "content": "go"})

    async def loop() -> None:
        for n in range(2):
            await ctx.aopenai()
            reply = await ctx.arecord(_reply(["call_0"]))
            ctx.add_tool_result(reply.tool_calls[0].id, f"result {n}")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(loop())
    said = [w for w in caught if issubclass(w.category, ContextWarning)]
    assert len(said) == 1
    assert said[0].filename == __file__
    assert "reused tool call id 'call_0'" in str(said[0].message)
