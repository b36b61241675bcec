"""What a model call costs through each framework integration, at 1,000 and 10,000 messages.

    python bench/framework_calls.py                 # 1,000 and 10,000 messages
    python bench/framework_calls.py --sizes 1000 --calls 20

A LangChain thread goes through `CtxrulesMiddleware` and an Agents SDK run through the
standalone input filter, each grown call by call to the size (a call every 50 messages,
as an agent's would be), with a read and its result (a few hundred characters) between
calls. Then each timed call adds one read and prepares the context: CPU time of the
integration's hook alone (the framework's own work is not in it), median and mean. Beside
it, LangChain's `trim_messages` on the same messages, as a user of ``before_model`` would
call it each turn. Both integrations read and convert only what is new since the last
call: before, every call converted the whole context (LangChain, 15 ms at 1,000 messages)
or keyed the whole run again (the Agents SDK, 122 ms at 10,000 items).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import context_turns  # the sibling benchmark's fixtures (ruler, peer counter)

EVERY = 50
WINDOW = 128_000


def _result(i: int) -> str:
    return f"def handler_{i}(request):\n    return route(request, '/v1/items/{i}')\n" * 6


def _timed(call: Callable[[], object], grow: Callable[[], None], calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        grow()
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    return times


def langchain(size: int, calls: int, bench: Any) -> dict[str, float]:
    """The middleware's hook per call, and `trim_messages` on the same messages."""
    from langchain.agents.middleware import ModelRequest  # noqa: PLC0415 - an extra
    from langchain_core.messages import (  # noqa: PLC0415
        AIMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
        trim_messages,
    )

    from ctxrules.integrations.langchain import CtxrulesMiddleware  # noqa: PLC0415

    middleware = CtxrulesMiddleware(
        window=WINDOW,
        tokenizer=bench.RULER,
        background=False,
        summarizer=lambda _: "summary",
        clock=lambda: 0.0,
    )
    messages: list[Any] = [HumanMessage("Fix the parser.", id="h")]
    count = [0]

    def grow() -> None:
        i = count[0] = count[0] + 1
        call = {"name": "read_file", "args": {"path": f"src/m{i}.py"}, "id": f"c{i}"}
        messages.append(AIMessage(f"Reading {i}.", id=f"a{i}", tool_calls=[call]))
        messages.append(ToolMessage(_result(i), tool_call_id=f"c{i}", id=f"t{i}"))

    def call() -> object:
        request = ModelRequest(
            model=None,  # type: ignore[arg-type]
            messages=list(messages),
            system_message=SystemMessage("Work."),
            tool_choice=None,
            tools=[],
            response_format=None,
            state={"messages": messages},  # type: ignore[typeddict-item]
            runtime=None,  # type: ignore[arg-type]
            model_settings={},
        )
        return middleware._tightened(request)  # noqa: SLF001 - the hook's own work, no model

    while len(messages) < size:
        grow()
        if count[0] % EVERY == 0:
            call()
    ours = _timed(call, grow, calls)
    budget = WINDOW // 2
    trims = _timed(
        lambda: trim_messages(
            messages, max_tokens=budget, token_counter=bench.peer_tokens, strategy="last"
        ),
        lambda: None,
        3,
    )
    prep = middleware.last_prep
    return {
        "messages": len(messages),
        # What the last timed call sent: a hook that failed would send the state unchanged.
        "sent": len(prep.messages) if prep is not None else 0,
        "median_ms": statistics.median(ours) * 1e3,
        "mean_ms": statistics.fmean(ours) * 1e3,
        "trim_messages_ms": statistics.median(trims) * 1e3,
    }


def agents(size: int, calls: int, bench: Any) -> dict[str, float]:
    """The standalone input filter per model call, the SDK sending the whole run each time."""
    from agents import Agent  # noqa: PLC0415 - an extra
    from agents.run_config import CallModelData, ModelInputData  # noqa: PLC0415

    from ctxrules.integrations.openai_agents import ctxrules_input_filter  # noqa: PLC0415

    run_filter = ctxrules_input_filter(window=WINDOW, tokenizer=bench.RULER)
    agent = Agent(name="reader", instructions="Work.")
    items: list[dict[str, object]] = [{"role": "user", "content": "Fix the parser."}]
    count = [0]

    def grow() -> None:
        i = count[0] = count[0] + 1
        arguments = json.dumps({"path": f"src/m{i}.py"})
        items.append(
            {
                "type": "function_call",
                "call_id": f"c{i}",
                "name": "read_file",
                "arguments": arguments,
            }
        )
        items.append({"type": "function_call_output", "call_id": f"c{i}", "output": _result(i)})

    def call() -> object:
        data = ModelInputData(input=list(items), instructions="Work.")  # type: ignore[arg-type]
        return run_filter(CallModelData(model_data=data, agent=agent, context=None))

    while len(items) < size:
        grow()
        if count[0] % EVERY == 0:
            call()
    ours = _timed(call, grow, calls)
    prep = run_filter.last_prep
    return {
        "messages": len(items),
        "sent": len(prep.messages) if prep is not None else 0,
        "median_ms": statistics.median(ours) * 1e3,
        "mean_ms": statistics.fmean(ours) * 1e3,
    }


def main() -> int:
    """Print one row per framework and size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    bench = context_turns.fixtures()
    lines = [
        "| integration | messages | call, median | call, mean | `trim_messages` | ratio |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    sys.stdout.write("\n".join(lines) + "\n")
    for size in args.sizes:
        row = langchain(size, args.calls, bench)
        ratio = row["trim_messages_ms"] / row["median_ms"]
        sys.stdout.write(
            f"| LangChain middleware | {row['messages']:,} | {row['median_ms']:.2f} ms | "
            f"{row['mean_ms']:.2f} ms | {row['trim_messages_ms']:.1f} ms | {ratio:,.0f} x |\n"
        )
        row = agents(size, args.calls, bench)
        sys.stdout.write(
            f"| Agents SDK filter | {row['messages']:,} | {row['median_ms']:.2f} ms | "
            f"{row['mean_ms']:.2f} ms | - | - |\n"
        )
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
