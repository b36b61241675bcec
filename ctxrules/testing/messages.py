"""Strategies for neutral messages: well-formed conversations and, on request, broken ones."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from ctxrules.render.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock

TEXTS = st.sampled_from(["", " ", "\n", "done.", "上下文规则", "日本語のテキスト"]) | st.text(
    st.characters(codec="utf-8"), max_size=12
)
IDS = st.sampled_from(["call_1", "call_2", "toolu_3", "bad id", ""])
NAMES = st.sampled_from(["read_file", "ls", "web_search"])
ARGUMENTS = st.sampled_from(
    ['{"path": "src/main.py"}', '{"path": "src/ma…', "[1, 2]", "", "NaN", "{}"]
) | st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=4), max_size=3).map(
    json.dumps
)


@st.composite
def conversations(draw: st.DrawFn, *, malformed: bool = True) -> list[Message]:
    """Neutral messages: text of every role and tool turns, plus orphans when ``malformed``.

    Malformed conversations hold orphan results, unanswered calls, duplicate or invalid
    ids, truncated arguments and tool blocks in the wrong role, as adapters must survive.
    """
    kinds = ["text", "pair"] + (["orphan_result", "lone_call", "misplaced"] if malformed else [])
    messages: list[Message] = []
    for kind in draw(st.lists(st.sampled_from(kinds), max_size=10)):
        if kind == "text":
            role = draw(st.sampled_from(["system", "user", "assistant"]))
            messages.append(Message(role, tuple(map(TextBlock, draw(st.lists(TEXTS, max_size=3))))))
        elif kind == "pair":
            count = draw(st.integers(1, 3))
            ids = [draw(IDS) if malformed else f"call_{len(messages)}_{k}" for k in range(count)]
            lead = tuple(map(TextBlock, draw(st.lists(TEXTS, max_size=1))))
            calls = tuple(ToolUseBlock(i, draw(NAMES), draw(ARGUMENTS)) for i in ids)
            messages.append(Message("assistant", lead + calls))
            results = [ToolResultBlock(i, draw(TEXTS)) for i in draw(st.permutations(ids))]
            if draw(st.booleans()):
                messages.append(Message("tool", tuple(results)))
            else:
                messages.extend(Message("tool", (result,)) for result in results)
        elif kind == "orphan_result":
            messages.append(Message("tool", (ToolResultBlock(draw(IDS), draw(TEXTS)),)))
        elif kind == "lone_call":
            call = ToolUseBlock(draw(IDS), draw(NAMES), draw(ARGUMENTS))
            messages.append(Message("assistant", (call,)))
        else:
            block = draw(
                st.builds(ToolUseBlock, IDS, NAMES, ARGUMENTS)
                | st.builds(ToolResultBlock, IDS, TEXTS)
            )
            messages.append(
                Message(draw(st.sampled_from(["system", "user", "assistant"])), (block,))
            )
    return messages
