"""A scripted agent loop through `Context` with a store, for the tests that replay what it stored."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import attrs

from ctxrules import Context
from ctxrules.store import open_store

READ_TOOL = {
    "type": "function",
    "function": {
        "name": "read",
        # Agents' tool descriptions run to pages: this one is about 900 tokens of the window.
        "description": "Read a file of the workspace, whole or by lines. " * 90,
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}
SPECS = Path(__file__).resolve().parents[1] / "specs"


def spec_of(loop: Loop) -> str:
    """The spec the loop's `Context` is given: a built-in name, or its text with the recall tools."""
    if not loop.recall:
        return loop.spec
    return (SPECS / f"{loop.spec}.toml").read_text(encoding="utf-8") + "\n[recall]\ntools = true\n"


@attrs.frozen
class Loop:
    """One scripted agent session: its window, what it sends beside the history, its outputs."""

    window: int
    outputs: tuple[int, ...]
    system: str = ""
    tools: bool = False
    recall: bool = False
    pin_at: int | None = None
    reopen: int = 0
    usage: bool = False
    #: Characters of the user's own words a turn: no rule shortens them, so only a
    #: compaction keeps a long loop in the window.
    said: int = 0
    #: Summaries written by `summarize` in the turn (replayed with ``--summarizer``).
    summarizer: bool = False
    #: ``await ctx.aopenai()`` instead of ``ctx.openai()``.
    use_async: bool = False
    #: The built-in spec the loop runs.
    spec: str = "default"
    #: Replies as Anthropic messages that begin with a signed thinking block.
    thinking: bool = False


def summarize(messages: tuple[object, ...]) -> str:
    """A summarizer as a host writes one: a pure function of what it folds."""
    return f"Summary of {len(messages)} messages: files read, handlers checked."


#: How ``ctxrules replay --summarizer`` names `summarize`.
SUMMARIZER = "tests.live_loop:summarize"


def run_live(loop: Loop, store: str, *, model: str = "gpt-4o", session: str = "main") -> list[int]:
    """Run the loop through `Context` on ``store``; the tokens of each request it built."""
    clock = [1_000.0]

    def opened() -> Context:
        return Context(
            spec_of(loop),
            model=model,
            window=loop.window,
            system=loop.system,
            tools=[READ_TOOL] if loop.tools else [],
            store=store,
            session=session,
            clock=lambda: clock[0],
            summarizer=summarize if loop.summarizer else None,
            # In the turn: a summary written in the background lands when the thread is done.
            background=False,
        )

    ctx, requests = opened(), []
    for turn, size in enumerate(loop.outputs):
        clock[0] += 30
        words = f" and mind module {turn}'s callers" * (loop.said // 30)
        ctx.add({"role": "user", "content": f"step {turn}: read src/mod_{turn}.py{words}"})
        if turn == loop.pin_at:
            ctx.pin()
        for reply in ("call", "answer"):
            sent = asyncio.run(ctx.aopenai()) if loop.use_async else ctx.openai()
            tokens = ctx.last.request_tokens if ctx.last is not None else 0
            requests.append(tokens)
            message: dict[str, object] = {"role": "assistant", "content": f"done {turn}"}
            if reply == "call":
                arguments = json.dumps({"path": f"src/mod_{turn}.py"})
                call = {
                    "id": f"c{turn}",
                    "type": "function",
                    "function": {"name": "read", "arguments": arguments},
                }
                message = {"role": "assistant", "tool_calls": [call]}
            response: dict[str, object] = {"choices": [{"message": message}]}
            if loop.usage:
                response["usage"] = {"prompt_tokens": tokens + 5, "completion_tokens": 9}
            if loop.thinking:
                response = _with_thinking(message, turn)
            ctx.record(response)
            if reply == "call":
                text = f"def handler_{turn}():\n    return {turn}\n" * (size // 30 + 1)
                ctx.add_tool_result(f"c{turn}", text[:size])
            assert sent["messages"]
        if loop.reopen and turn % loop.reopen == loop.reopen - 1:
            ctx.close()
            ctx = opened()
    ctx.close()
    return requests


def _with_thinking(message: dict[str, object], turn: int) -> dict[str, object]:
    """The reply as an Anthropic message led by a thinking block (the replay reads it back)."""
    thought = f"Turn {turn}: read the module, then answer. " * (1 + turn % 5)
    content: list[dict[str, object]] = [
        {"type": "thinking", "thinking": thought, "signature": f"sig-{turn}"}
    ]
    for call in message.get("tool_calls", ()):  # type: ignore[attr-defined]
        function = call["function"]
        content.append(
            {
                "type": "tool_use",
                "id": call["id"],
                "name": function["name"],
                "input": json.loads(function["arguments"]),
            }
        )
    if isinstance(message.get("content"), str):
        content.append({"type": "text", "text": message["content"]})
    return {"type": "message", "role": "assistant", "content": content}


def final_commits(store: str, session: str) -> dict[str, list[str]]:
    """Each request's commit (the last stored at its head) as the digests of its items."""
    opened = open_store(store).unwrap()
    try:
        commits = opened.commits_for(session).unwrap()
    finally:
        opened.close()
    return {c.head_node_id or "": [item.digest for item in c.items] for c in commits}
