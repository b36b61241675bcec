"""`Context` offers the recall tools itself: schemas in requests, answers in one call, offload per turn."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest

import ctxrules
from ctxrules.recall import handle_for
from ctxrules.spec.recall import RecallOptions
from ctxrules.store import SqliteStore
from ctxrules.testing.fake_sdk import FakeAnthropic, FakeOpenAI, recall_first_handle

pytest.importorskip("openai")
pytest.importorskip("anthropic")

SPEC = """
[recall]
tools = true
page_tokens = 500

[[rules]]
use = "cap_tool_result"
[rules.params]
max_chars = 400
tail_share = 0.25
"""
LOG = "".join(f"line {i}: all is well\n" for i in range(200))
TOOLS = [{"name": "read_log", "description": "Read the log", "input_schema": {"type": "object"}}]


def _names(tools: object) -> list[str]:
    assert isinstance(tools, list)
    return [t.get("name") or t["function"]["name"] for t in tools]


def test_the_spec_offers_both_tools_in_either_request() -> None:
    """With ``[recall] tools = true`` both request shapes carry the host's tools and the two recall tools."""
    ctx = ctxrules.Context(SPEC, model="gpt-4o", tools=TOOLS)
    ctx.add({"role": "user", "content": "hi"})
    assert _names(ctx.openai()["tools"]) == ["read_log", "recall", "search_history"]
    assert _names(ctx.anthropic()["tools"]) == ["read_log", "recall", "search_history"]
    plain = ctxrules.Context("default", model="gpt-4o")
    plain.add({"role": "user", "content": "hi"})
    assert "tools" not in plain.openai()


def test_the_async_twins_offer_them_too() -> None:
    """``aopenai`` and ``aanthropic`` carry the recall tools like their blocking twins."""
    ctx = ctxrules.Context(SPEC, model="gpt-4o")
    ctx.add({"role": "user", "content": "hi"})
    assert _names(asyncio.run(ctx.aopenai())["tools"]) == ["recall", "search_history"]
    assert _names(asyncio.run(ctx.aanthropic())["tools"]) == ["recall", "search_history"]


def test_a_pipeline_takes_its_recall_options_from_the_argument() -> None:
    """A `Pipeline` has no ``[recall]`` table, so ``recall=`` switches the tools on."""
    ctx = ctxrules.Context(ctxrules.Pipeline(), model="gpt-4o", recall=RecallOptions(tools=True))
    ctx.add({"role": "user", "content": "hi"})
    assert _names(ctx.openai()["tools"]) == ["recall", "search_history"]


def _loop(ctx: ctxrules.Context, send) -> list[str]:
    """Run the agent loop; the host runs read_log, the context answers recall calls."""
    answers = []
    while True:
        reply = ctx.record(send())
        if not reply.tool_calls:
            return answers
        for call in reply.tool_calls:
            answer = ctx.answer_recall(call)
            if answer is None:
                ctx.add_tool_result(call.id, LOG)
            else:
                answers.append(answer)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_model_recalls_a_capped_result_page_by_page(provider: str) -> None:
    """The model sees a capped log with its handle, recalls it, and the pages join to the whole log."""
    script = [[("read_log", {})], recall_first_handle, "done"]
    ctx = ctxrules.Context(SPEC, model="gpt-4o", tools=TOOLS)
    ctx.add({"role": "user", "content": "what does the log say?"})
    if provider == "openai":
        client = FakeOpenAI(script)
        answers = _loop(ctx, lambda: client.chat.completions.create(**ctx.openai()))
    else:
        client = FakeAnthropic(script)
        answers = _loop(ctx, lambda: client.messages.create(**ctx.anthropic()))
    assert len(answers) == 1
    assert answers[0].startswith("[h:")
    assert "page 1 of " in answers[0].splitlines()[0]
    assert LOG.startswith(answers[0].split("\n", 1)[1])
    assert "recall page 2 for more" in json.dumps(client.requests[-1]["messages"])


def test_raw_tool_call_shapes_and_other_tools() -> None:
    """OpenAI and Anthropic call dicts are read; another tool's call is left to the host (None)."""
    ctx = ctxrules.Context(SPEC, model="gpt-4o", tools=TOOLS)
    ctx.add({"role": "user", "content": "hi"})
    ctx.add(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "search_history", "arguments": '{"query": "hi"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "read_log", "arguments": "{}"},
                },
            ],
        }
    )
    raw = {
        "id": "c1",
        "type": "function",
        "function": {"name": "search_history", "arguments": '{"query": "hi"}'},
    }
    assert ctx.answer_recall(raw) == "[search_history is not available in this session]"
    assert (
        ctx.answer_recall({"type": "tool_use", "id": "c2", "name": "read_log", "input": {}}) is None
    )
    with pytest.raises(ctxrules.ContextError, match="cannot read tool call"):
        ctx.answer_recall({"name": "recall"})


def test_search_uses_the_store_and_offload_keeps_the_whole_log(tmp_path) -> None:
    """With a store, search_history finds the hidden line by FTS and the capped log is offloaded whole."""
    store = SqliteStore.open(tmp_path / "s.sqlite").unwrap()
    ctx = ctxrules.Context(SPEC, model="gpt-4o", tools=TOOLS, store=store, session="s")
    ctx.add({"role": "user", "content": "what does the log say?"})
    client = FakeOpenAI([[("read_log", {})], [("search_history", {"query": "line 150"})], "done"])
    answers = _loop(ctx, lambda: client.chat.completions.create(**ctx.openai()))
    tool = next(n for n in ctx.session.graph.nodes.values() if n.name == "read_log")
    assert answers[0].split()[0] == handle_for(tool.id)
    assert "150" in answers[0]
    assert store.get_blob("s", handle_for(tool.id)).unwrap() == LOG
    store.close()


def test_a_capped_log_is_stored_once_and_its_original_still_comes_back(tmp_path) -> None:
    """Over 30 turns no copy of a capped log is written: `get_blob` gives each back from its node."""
    path = tmp_path / "s.sqlite"
    store = SqliteStore.open(path).unwrap()
    ctx = ctxrules.Context(SPEC, model="gpt-4o", tools=TOOLS, store=store, session="s")
    ctx.add({"role": "user", "content": "watch the log"})
    turns = 30
    client = FakeOpenAI([*([[("read_log", {})]] * turns), "done"])
    for turn in range(turns + 1):
        reply = ctx.record(client.chat.completions.create(**ctx.openai()))
        for call in reply.tool_calls:
            ctx.add_tool_result(call.id, f"turn {turn}\n{LOG}")
    assert ctx.last is not None
    capped = [i for i in ctx.last.commit.items if i.is_tool and i.state.value != "full"]
    assert len(capped) == turns
    logs = [n for n in ctx.session.graph.nodes.values() if n.name == "read_log"]
    originals = sorted(store.get_blob("s", handle_for(n.id)).unwrap() or "" for n in logs)
    assert originals == sorted(f"turn {t}\n{LOG}" for t in range(turns))
    assert store.get_blob("s", "h:zzzzzzzz").unwrap() is None
    store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM blobs").fetchone() == (0,)
