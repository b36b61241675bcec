"""A live loop through `Context` at every window: prefix stability, batch causes, summarizer calls.

A scripted agent makes one tool call per turn and gets tool outputs of every size back (a
few hundred characters up to 190,000), as a user's loop does with the default spec. Run
this file as a script for the figures at more turns:
``python tests/engine/test_live_windows.py 150``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
from collections import Counter

import attrs
import pytest

import ctxrules
from ctxrules.render import Message
from ctxrules.rules.batching import last_batch

#: The windows a user may run the default spec at.
WINDOWS = (8_000, 16_000, 32_000, 128_000, 200_000, 1_000_000)
#: Tool output sizes in characters, in the order the scripted tool returns them.
SIZES = (300, 1_200, 190_000, 600, 6_000, 2_500, 40_000, 900, 12_000, 150)
#: The host's tools, as an agent declares them (their schemas are part of every request).
TOOLS = tuple(
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name.replace('_', ' ').capitalize()} in the workspace.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "A workspace path."}},
                "required": ["path"],
            },
        },
    }
    for name in ("read_file", "list_dir", "grep_files", "write_file")
)
SYSTEM = "You are a coding agent. Read files with the tools, then report. " * 12
#: Seconds between two requests: a busy agent, well inside a provider's cache TTL.
STEP_SECONDS = 20.0


@attrs.frozen
class LoopFigures:
    """What a run of ``turns`` requests at ``window`` did."""

    window: int
    turns: int
    summarizer_calls: int
    batches: Counter[str]
    extensions: int
    compactions: int
    over_window: int
    spurious_budget: int

    @property
    def extension_share(self) -> float:
        """Requests that extend the previous one, of all requests after the first."""
        return self.extensions / max(self.turns - 1, 1)


def _output(turn: int, size: int) -> str:
    """Tool output of ``size`` characters, distinct per turn: source lines, or a dense dump when huge."""
    if size >= 100_000:
        dump = (
            f"{turn:03d}:{i:05d} {hashlib.sha256(f'{turn}/{i}'.encode()).hexdigest()} ok\n"
            for i in itertools.count()
        )
        return "".join(itertools.islice(dump, size // 70 + 1))[:size]
    line = "def handler_{0}_{1}(request):\n    return lookup(request, key='k{0}_{1}')\n"
    lines = (line.format(turn, i) for i in itertools.count())
    return "".join(itertools.islice(lines, size // 60 + 1))[:size]


def _response(turn: int) -> dict[str, object]:
    """A fake Chat Completions response with one ``read_file`` call."""
    call = {
        "id": f"call_{turn}",
        "type": "function",
        "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/m{turn}.py"})},
    }
    message = {"role": "assistant", "content": f"Reading m{turn}.", "tool_calls": [call]}
    return {
        "choices": [{"message": message}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 20},
    }


def run_loop(window: int, turns: int, sizes: tuple[int, ...] = SIZES) -> LoopFigures:
    """Drive `Context` with the default spec for ``turns`` requests at ``window``."""
    calls = 0

    def summarize(_: tuple[Message, ...]) -> str:
        nonlocal calls
        calls += 1
        return f"Summary {calls}: the agent read many modules."

    clock = itertools.count(step=STEP_SECONDS)
    ctx = ctxrules.Context(
        model="gpt-4o",
        window=window,
        system=SYSTEM,
        tools=TOOLS,
        summarizer=summarize,
        clock=lambda: float(next(clock)),
    )
    ctx.add({"role": "user", "content": "Read the modules one by one and report what they do."})
    previous: list[object] = []
    extensions = compactions = over_window = spurious = 0
    sent = None
    batches: Counter[str] = Counter()
    seen = 0
    for turn in range(turns):
        messages = list(ctx.openai()["messages"])  # type: ignore[call-overload]
        if turn and messages[: len(previous)] == previous:
            extensions += 1
        previous = messages
        prep = ctx.last
        assert prep is not None
        compacted = any(step.startswith("compact:finished") for step in prep.decision_path)
        compactions += compacted
        over_window += prep.request_tokens > prep.budget.input_budget
        count, why = last_batch(prep.commit)
        if count != seen and why is not None:
            batches[why.name] += 1
            if why.name == "BUDGET" and sent is not None and not compacted:
                # What this request would have sent without the batch point: the previous
                # request's history plus the new items as the rules made them.
                held = sent.total_tokens + sum(
                    i.tokens for i in prep.commit.items[len(sent.items) :]
                )
                fixed = prep.request_tokens - prep.commit.total_tokens
                spurious += held + fixed < 0.8 * prep.budget.input_budget
        seen, sent = count, prep.commit
        reply = ctx.record(_response(turn))
        ctx.add_tool_result(reply.tool_calls[0].id, _output(turn, sizes[turn % len(sizes)]))
    return LoopFigures(
        window, turns, calls, batches, extensions, compactions, over_window, spurious
    )


@pytest.mark.parametrize("window", WINDOWS)
def test_every_batch_point_has_a_declared_cause_and_none_is_a_false_budget(window: int) -> None:
    """Over 40 turns: no request over the budget, no budget point while the sent history is under it."""
    figures = run_loop(window, 40)
    assert figures.over_window == 0, figures
    assert figures.spurious_budget == 0, figures
    assert set(figures.batches) <= {"START", "TURNS", "BUDGET", "COLD", "COMPACTION"}, figures
    # At 8k too: the default spec's sizes shrink with the budget (12 calls in 40 turns before).
    assert figures.summarizer_calls <= (2 if window >= 16_000 else 3), figures
    if window >= 32_000:
        assert figures.extension_share >= 0.9, figures


@pytest.mark.parametrize("window", [16_000, 32_000])
def test_aging_lands_at_small_windows_without_calling_the_summarizer(window: int) -> None:
    """With ordinary tool outputs a 16k or 32k window ages results in batches, not by summaries."""
    figures = run_loop(window, 40, sizes=(3_000, 1_500, 3_500, 2_500))
    assert figures.batches.keys() - {"START"}, figures
    assert figures.summarizer_calls <= 2, figures


@pytest.mark.parametrize("window", [8_000, 16_000])
def test_a_small_window_calls_the_summarizer_at_most_once_per_20_turns(window: int) -> None:
    """Over 150 turns at 8k or 16k the default spec summarizes at most 7 times (49 at 8k before)."""
    figures = run_loop(window, 150)
    assert figures.over_window == 0, figures
    assert figures.summarizer_calls <= 150 // 20, figures
    assert figures.batches["BUDGET"] + figures.batches["TURNS"] > 0, figures


if __name__ == "__main__":
    for n in map(int, sys.argv[1:] or ["40"]):
        for w in WINDOWS:
            f = run_loop(w, n)
            print(  # noqa: T201 - the script reports its figures
                f"turns={n:4} window={w:>9,} summaries={f.summarizer_calls:3} "
                f"compactions={f.compactions:3} over={f.over_window} spurious={f.spurious_budget} "
                f"extensions={f.extension_share:6.1%} "
                f"batches={dict(f.batches)}"
            )
