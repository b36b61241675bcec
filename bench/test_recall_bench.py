"""`Context.answer_recall` at 1k, 10k and 100k messages, beside reading the answer's own text.

The session is the benchmarks' synthetic history added through `Context` (user, assistant
calling a tool, the tool's result), then one request prepared with compaction at a 200k
window (a short summary stands in for the LLM's). Each round the model calls ``recall``
on one tool result from the middle of the history (8 lines, about 500 characters, long
behind the summary): the setup adds that call, the round answers it and records the answer
as its tool result. Beside it, reading the answer's own text: the node's original, cut
into its page, with the header, from a one-handle index.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest
from pyrsistent import pmap

import ctxrules
from ctxrules.canonical import canonical_json
from ctxrules.engine.recall import SessionRecall
from ctxrules.recall import RecallIndex, ToolAnswer, answer_recall, handle_for, node_original
from ctxrules.spec.recall import RecallOptions

#: The window with compaction (the prepare benchmark's), and the stand-in summary.
WINDOW = 200_000
SUMMARY = "The user and the assistant read, grepped and edited files of the project, turn by turn."
#: Rounds per size; a round is one recall call answered.
ROUNDS = {1_000: 50, 10_000: 30, 100_000: 15}
#: Rounds of the first recall, which walks the whole history.
FIRST_ROUNDS = {1_000: 10, 10_000: 5, 100_000: 3}


@attrs.define
class RecallSession:
    """A `Context` holding ``size`` messages and one request, and the tool node to recall."""

    size: int
    ctx: ctxrules.Context
    node_id: str
    calls: int = 0

    @property
    def arguments(self) -> dict[str, object]:
        """The recall call's arguments: the handle of the node, its first page."""
        return {"handle": handle_for(self.node_id)}

    def next_call(self) -> tuple[tuple[dict[str, object]], dict[str, object]]:
        """Setup of a round: the assistant's message with a new recall call, added to the session."""
        self.calls += 1
        call = {
            "id": f"recall_{self.calls}",
            "type": "function",
            "function": {"name": "recall", "arguments": canonical_json(self.arguments)},
        }
        self.ctx.add({"role": "assistant", "content": None, "tool_calls": [call]})
        return (call,), {}


def _messages(bench: Any, turn: int) -> list[dict[str, object]]:
    """Turn ``turn`` of the synthetic history as OpenAI messages (the prepare benchmark's text)."""
    tool = bench.TOOLS[turn % len(bench.TOOLS)]
    arguments = canonical_json({"path": f"src/pkg{turn % 37}/mod_{turn}.py"})
    call = {
        "id": f"call_{turn}",
        "type": "function",
        "function": {"name": tool, "arguments": arguments},
    }
    lines = bench.RESULT_LINES[turn % len(bench.RESULT_LINES)]
    return [
        {"role": "user", "content": bench.text(3 * turn, 2)},
        {"role": "assistant", "content": bench.text(3 * turn + 1, 3), "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": f"call_{turn}",
            "content": bench.text(3 * turn + 2, lines),
        },
    ]


def build_recall_session(bench: Any, size: int) -> RecallSession:
    """``size`` messages added through `Context`, one request prepared; the node to recall."""
    ctx = ctxrules.Context(
        "default",
        model="gpt-4o",
        window=WINDOW,
        tokenizer=bench.RULER,
        summarizer=lambda _: SUMMARY,
        clock=lambda: 0.0,
        recall=RecallOptions(tools=True),
    )
    turns = size // 3
    for turn in range(turns):
        ctx.add(*_messages(bench, turn))
    ctx.openai()
    # A turn with an 8-line result (turn % 5 == 2), from the middle of the history.
    target = f"call_{turns // 2 - (turns // 2 - 2) % 5}"
    node_id = next(
        n.id for n in ctx.session.graph.nodes.values() if n.metadata.get("tool_call_id") == target
    )
    return RecallSession(size, ctx, node_id)


@pytest.fixture(scope="session")
def recall_sessions(bench_module: Any) -> Callable[[int], RecallSession]:
    """A getter of the recall session of each size, each built once per run."""
    built: dict[int, RecallSession] = {}

    def get(size: int) -> RecallSession:
        if size not in built:
            with bench_module.gc_paused():
                built[size] = build_recall_session(bench_module, size)
        return built[size]

    return get


def read_answer(session: RecallSession) -> ToolAnswer:
    """The answer's own text: the node's original, cut into its page, from a one-handle index."""
    ctx = session.ctx
    original = node_original(ctx.session.graph, session.node_id)
    assert original is not None
    index = RecallIndex(pmap({original.handle: original}))
    return answer_recall(
        index,
        session.arguments,
        tokenizer=ctx.engine.tokenizer,
        page_tokens=ctx.recall.options.page_tokens,
    )


def test_answer_recall(benchmark: Any, recall_sessions: Any, size: int) -> None:
    """One recall call answered through `Context` and recorded as its tool result.

    The warm-up round is the first recall of this `Context`, which indexes the history
    once (`test_first_recall`); each timed round indexes only the nodes added since.
    """
    session = recall_sessions(size)
    expected = read_answer(session).text
    benchmark.extra_info.update(kind="answer_recall", size=size, chars=len(expected))
    answer = benchmark.pedantic(
        session.ctx.answer_recall,
        setup=session.next_call,
        rounds=ROUNDS[size],
        warmup_rounds=1,
        iterations=1,
    )
    assert answer == expected


def test_first_recall(benchmark: Any, recall_sessions: Any, size: int) -> None:
    """The first recall of a `Context` that has not indexed its history (as after a resume): one walk."""
    session = recall_sessions(size)
    ctx = session.ctx
    expected = read_answer(session).text
    benchmark.extra_info.update(kind="first_recall", size=size)

    def setup() -> tuple[tuple[dict[str, object]], dict[str, object]]:
        ctx.recall = SessionRecall(ctx.recall.options, ctx.recall.tokenizer)
        return session.next_call()

    answer = benchmark.pedantic(
        ctx.answer_recall, setup=setup, rounds=FIRST_ROUNDS[size], iterations=1
    )
    assert answer == expected


def test_read_answer_text(benchmark: Any, recall_sessions: Any, size: int) -> None:
    """The floor under an answer: reading the recalled node's text and cutting its page."""
    session = recall_sessions(size)
    benchmark.extra_info.update(kind="read_answer", size=size)
    answer = benchmark.pedantic(read_answer, args=(session,), rounds=ROUNDS[size], iterations=1)
    assert not answer.is_error
    assert 400 < len(answer.body) < 700
