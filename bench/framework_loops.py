"""Agent loops through the framework integrations: what a LangChain or Agents SDK user gets.

    python bench/framework_loops.py                          # both frameworks, 16k/32k/128k
    python bench/framework_loops.py --frameworks agents --windows 32000 --tasks 20
    python bench/framework_loops.py --json loops.json

A scripted model works through ``--tasks`` tasks: each reads one to three files (two in
parallel now and then; outputs of 40 characters to 40 kB), then reports; every fifth task
starts by recalling the newest handle it was shown (``recall``, registered by the
integration). The LangChain agent is a ``create_agent`` agent with `CtxrulesMiddleware`
and a checkpointer; the Agents SDK agent runs each task as a run on a `CtxSession` with its
input filter. Both keep a SQLite store. The same script runs again without ctxrules (the
whole history resent: the naive cost). Per row: model calls, the share that start with
the whole previous call (the cached prefix kept), the largest call and the calls over the
window (counted by the library's ruler), the cost under Anthropic's cache prices against
the naive run's (which outgrows the window: its largest call is shown), and the recalls answered with a page of the original. Exit status 1 when
a row misses: ≥ 85 % of calls extend the previous, none over the window, every recall
answered, cost below naive.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from ctxrules.cache.pricing import CacheState
from ctxrules.cache.profiles import anthropic
from ctxrules.store import SqliteStore
from ctxrules.tokens import load_encoding
from ctxrules.tokens.budget import input_budget_for

RULER = load_encoding("cl100k_base").unwrap()
SIZES = (40, 600, 3_000, 12_000, 40_000)
HANDLE = re.compile(r"\[recall (h:[a-z2-7]{8})\]")
SECONDS_PER_CALL = 6.0
GOAL_EXTENDS = 0.85


def file_text(n: int) -> str:
    """What ``read_file(n)`` returns: code naming ``module_n``, of one of `SIZES`."""
    size = SIZES[(n // 10 + n) % len(SIZES)]
    line = f"def handler_{n}(request): return route(request, '/v1/items/{n}')  # module_{n}\n"
    return (line * (size // len(line) + 1))[:size]


class Script:
    """The model's decisions, the same whatever framework asks: read, recall, report."""

    def __init__(self) -> None:
        self.calls = 0
        self.task_calls = 0
        #: The recall calls made: (call id, the handle asked for).
        self.recalls: list[tuple[str, str]] = []

    def next(self, last_is_user: bool, shown: str, recall: bool) -> tuple[str, list[Any]]:
        """The reply's text and its tool calls ``(call id, name, arguments)`` for this call."""
        self.calls += 1
        self.task_calls = 1 if last_is_user else self.task_calls + 1
        n = self.calls
        if last_is_user and recall and n % 5 == 0:
            found = HANDLE.findall(shown)
            if found:
                self.recalls.append((f"c{n}_0", found[-1]))
                return "Recalling.", [(f"c{n}_0", "recall", {"handle": found[-1]})]
        if self.task_calls > 1 + n % 3:
            return f"Task step done; module_{n} fixed.", []
        width = 2 if n % 7 == 0 else 1
        return f"Reading {width}.", [
            (f"c{n}_{j}", "read_file", {"n": 10 * n + j}) for j in range(width)
        ]

    def recalled(self, results: Mapping[str, str]) -> list[tuple[str, str]]:
        """Each recall's handle and the tool result its call got (by call id; "" if none)."""
        return [(handle, results.get(call_id, "")) for call_id, handle in self.recalls]


#: Each message text's tokens, counted once however many calls send it.
_COUNTED: dict[str, int] = {}


def tokens(text: str) -> int:
    """The tokens of one message's text, by the library's ruler (counted once)."""
    found = _COUNTED.get(text)
    if found is None:
        found = _COUNTED[text] = RULER.count(text)
    return found


def price(calls: Sequence[Sequence[str]]) -> float:
    """The cache-weighted prompt cost of calls given as their messages' texts.

    A call shares with the one before the messages both start with, compared by text.
    """
    profile, cache, total = anthropic(), CacheState(), 0.0
    previous: Sequence[str] = ()
    for index, call in enumerate(calls):
        shared = 0
        while shared < min(len(call), len(previous)) and previous[shared] == call[shared]:
            shared += 1
        counts = [tokens(text) for text in call]
        priced, cache = cache.price(
            profile,
            now=index * SECONDS_PER_CALL,
            tokens=sum(counts),
            messages=len(call),
            shared_messages=shared,
            shared_tokens=sum(counts[:shared]),
        )
        total += priced.prompt_cost
        previous = call
    return total


def figures(calls: list[list[str]], window: int, recalls: list[tuple[str, str]]) -> dict[str, Any]:
    """What a row reports of the calls (each a list of its messages' JSON texts)."""
    extends = sum(now[: len(before)] == before for before, now in pairwise(calls))
    weights = [sum(map(tokens, call)) for call in calls]
    whole = sum(1 for handle, answer in recalls if answer.startswith(f"[{handle}: original"))
    return {
        "calls": len(calls),
        "extends_pct": round(100 * extends / max(len(calls) - 1, 1), 1),
        "max_tokens": max(weights, default=0),
        "over_window": sum(w > window for w in weights),
        "recalls": len(recalls),
        "recalls_whole": whole,
    }


def sliding(calls: list[list[str]], starts: list[list[bool]], budget: int) -> list[list[str]]:
    """The calls as a sliding window sends them: the longest tail from a user message in ``budget``.

    What a user of ``trim_messages(strategy="last", start_on="human")`` sends instead; the
    last user message stays even when its turn alone is over.
    """
    out = []
    for call, users in zip(calls, starts, strict=True):
        total, cut = 0, None
        for index in range(len(call) - 1, -1, -1):
            total += tokens(call[index])
            if total > budget:
                break
            if users[index]:
                cut = index
        if cut is None:  # not even the last turn fits: it is sent from its user message
            cut = max((i for i, user in enumerate(users) if user), default=0)
        out.append(call[cut:])
    return out


# -- LangChain ------------------------------------------------------------------------------


def langchain_loop(window: int, tasks: int, where: Path, *, ctxrules: bool) -> dict[str, Any]:
    """A ``create_agent`` agent through `CtxrulesMiddleware` (or none), ``tasks`` tasks."""
    from langchain.agents import create_agent  # noqa: PLC0415 - an extra
    from langchain_core.language_models import BaseChatModel  # noqa: PLC0415
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: PLC0415
    from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: PLC0415
    from langchain_core.tools import tool  # noqa: PLC0415
    from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: PLC0415
    from langgraph.checkpoint.memory import InMemorySaver  # noqa: PLC0415

    from ctxrules.integrations.langchain import CtxrulesMiddleware  # noqa: PLC0415

    script, calls = Script(), []

    class Scripted(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

        def _generate(self, messages: Any, *args: Any, **kw: Any) -> ChatResult:  # noqa: ARG002
            if kw.get("tools") is None:  # the summarizer
                return ChatResult(generations=[ChatGeneration(message=AIMessage("## Goal\nwork"))])
            texts = [
                json.dumps([m.type, m.content, getattr(m, "tool_calls", None)]) for m in messages
            ]
            calls.append(texts)
            names = {t["function"]["name"] for t in kw["tools"]}
            text, wanted = script.next(
                isinstance(messages[-1], HumanMessage), "\n".join(texts), "recall" in names
            )
            uses = [{"name": n, "args": a, "id": call_id} for call_id, n, a in wanted]
            return ChatResult(
                generations=[ChatGeneration(message=AIMessage(text, tool_calls=uses))]
            )

    @tool
    def read_file(n: int) -> str:
        """Read a file."""
        return file_text(n)

    store = SqliteStore.open(str(where / "langchain.sqlite"), synchronous="NORMAL").unwrap()
    clock = iter(float(t) for t in range(0, 10**7, int(SECONDS_PER_CALL)))
    middleware = (
        [CtxrulesMiddleware(window=window, store=store, recall=True, clock=lambda: next(clock))]
        if ctxrules
        else []
    )
    agent = create_agent(
        Scripted(), tools=[read_file], middleware=middleware, checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "loop"}, "recursion_limit": 200}
    state: Any = {}
    for task in range(tasks):
        state = agent.invoke({"messages": [HumanMessage(f"Task {task}: fix a module.")]}, config)
    results = {
        m.tool_call_id: str(m.content)
        for m in state.get("messages", [])
        if isinstance(m, ToolMessage)
    }
    store.close()
    return {
        **figures(calls, window, script.recalled(results)),
        "texts": calls,
        "starts": [[m.startswith('["human"') for m in call] for call in calls],
    }


# -- the OpenAI Agents SDK ------------------------------------------------------------------


def agents_loop(window: int, tasks: int, where: Path, *, ctxrules: bool) -> dict[str, Any]:
    """An Agents SDK agent: each task a run on a `CtxSession` with its filter (or none)."""
    from agents import (  # noqa: PLC0415 - an extra
        Agent,
        Model,
        ModelResponse,
        RunConfig,
        Runner,
        Usage,
        function_tool,
        set_tracing_disabled,
    )
    from openai.types.responses import (  # noqa: PLC0415
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from ctxrules.integrations.openai_agents import CtxSession  # noqa: PLC0415

    set_tracing_disabled(True)
    script, calls = Script(), []

    class Scripted(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            names = ("system_instructions", "input", "model_settings", "tools")
            given = dict(zip(names, args, strict=False)) | kwargs
            items, tools = given["input"], given["tools"]
            # The instructions lead the request (a receipt at their end is part of the prefix).
            instructions = json.dumps(["system", given.get("system_instructions")])
            texts = [instructions, *(json.dumps(dict(i), sort_keys=True) for i in items)]
            calls.append(texts)
            text, wanted = script.next(
                items[-1].get("role") == "user",
                "\n".join(texts),
                "recall" in {t.name for t in tools},
            )
            out: list[Any] = [
                ResponseFunctionToolCall(
                    type="function_call", call_id=call_id, name=n, arguments=json.dumps(a)
                )
                for call_id, n, a in wanted
            ]
            if not out:
                said = ResponseOutputText(type="output_text", annotations=[], text=text)
                out = [
                    ResponseOutputMessage(
                        id="m", type="message", role="assistant", status="completed", content=[said]
                    )
                ]
            return ModelResponse(output=out, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    def read_file(n: int) -> str:
        """Read a file."""
        return file_text(n)

    store = SqliteStore.open(str(where / "agents.sqlite"), synchronous="NORMAL").unwrap()
    clock = iter(float(t) for t in range(0, 10**7, int(SECONDS_PER_CALL)))
    session = CtxSession(
        "loop", window=window, store=store, system="Work.", clock=lambda: next(clock)
    )
    tools = [read_file, *session.recall_tools()] if ctxrules else [read_file]
    agent = Agent(name="worker", instructions="Work.", model=Scripted(), tools=tools)
    history: list[Any] = []

    async def go() -> None:
        nonlocal history
        for task in range(tasks):
            text = f"Task {task}: fix a module."
            if ctxrules:
                config = RunConfig(call_model_input_filter=session.input_filter())
                await Runner.run(agent, text, session=session, run_config=config, max_turns=40)
            else:
                result = await Runner.run(
                    agent, [*history, {"role": "user", "content": text}], max_turns=40
                )
                history = result.to_input_list()

    asyncio.run(go())
    results = {
        str(i["call_id"]): str(i.get("output"))
        for i in (session.items() if ctxrules else history)
        if i.get("type") == "function_call_output"
    }
    session.close()
    store.close()
    return {
        **figures(calls, window, script.recalled(results)),
        "texts": calls,
        "starts": [['"role": "user"' in m for m in call] for call in calls],
    }


LOOPS: dict[str, Callable[..., dict[str, Any]]] = {
    "langchain": langchain_loop,
    "agents": agents_loop,
}


def row(framework: str, window: int, tasks: int) -> dict[str, Any]:
    """One framework at one window, with ctxrules and without; the goals it misses."""
    with tempfile.TemporaryDirectory() as where:
        ours = LOOPS[framework](window, tasks, Path(where), ctxrules=True)
        naive = LOOPS[framework](window, tasks, Path(where), ctxrules=False)
    naive_cost = max(price(naive["texts"]), 1.0)
    cost = price(ours.pop("texts")) / naive_cost
    ours.pop("starts")
    window_cost = price(
        sliding(naive["texts"], naive["starts"], int(0.8 * input_budget_for(window)))
    )
    result = {
        "framework": framework,
        "window": window,
        **ours,
        "cost_vs_naive": round(cost, 3),
        "sliding_vs_naive": round(window_cost / naive_cost, 3),
        "naive_max_tokens": naive["max_tokens"],
    }
    misses = []
    if result["extends_pct"] < 100 * GOAL_EXTENDS:
        misses.append("extends")
    if result["over_window"]:
        misses.append("over_window")
    if result["recalls_whole"] < result["recalls"] or not result["recalls"]:
        misses.append("recalls")
    if cost >= 1:
        misses.append("cost")
    return {**result, "misses": misses}


def main(argv: Sequence[str] | None = None) -> int:
    """Print one row per framework and window; exit 1 if any misses a goal."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frameworks", default="langchain,agents")
    parser.add_argument("--windows", default="16000,32000,128000")
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--json", type=Path, help="write every row here")
    args = parser.parse_args(argv)
    rows = []
    sys.stdout.write(
        "| framework | window | calls | extend the previous | largest call | over window "
        "| recalls whole | cost ÷ naive | sliding window ÷ naive | naive's largest call "
        "| misses |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"
    )
    for framework in args.frameworks.split(","):
        for window in (int(w) for w in args.windows.split(",")):
            r = row(framework, window, args.tasks)
            rows.append(r)
            sys.stdout.write(
                f"| {framework} | {window:,} | {r['calls']} | {r['extends_pct']} % | "
                f"{r['max_tokens']:,} | {r['over_window']} | {r['recalls_whole']}/{r['recalls']} | "
                f"{r['cost_vs_naive']} | {r['sliding_vs_naive']} | {r['naive_max_tokens']:,} | {', '.join(r['misses']) or '-'} |\n"
            )
            sys.stdout.flush()
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if any(r["misses"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
