"""LangChain messages into ctxrules and back: every serialised form, nothing lost."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip(
    "ctxrules.integrations.langchain",
    reason="the langchain extra is not installed",
    exc_type=ImportError,
)

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.load import dumpd
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
    messages_to_dict,
)

from ctxrules.engine import DefaultContextEngine
from ctxrules.importers import import_text
from ctxrules.integrations.langchain import from_langchain, to_langchain
from ctxrules.tokens import HeuristicCounter

#: The round trip runs 1,000 examples under the ci profile; the dev profile keeps it quick.
EXAMPLES = 1_000 if os.environ.get("HYPOTHESIS_PROFILE") == "ci" else 40

FORMS = {
    "objects": list,
    "messages_to_dict": messages_to_dict,
    "messages_to_dict as JSON": lambda ms: json.loads(json.dumps(messages_to_dict(ms))),
    "dumpd": lambda ms: [dumpd(m) for m in ms],
    "openai dicts": convert_to_openai_messages,
}

texts = st.text(min_size=1, max_size=24)
names = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
contents = st.one_of(texts, st.lists(texts, min_size=1, max_size=3))


def _content(content: str | list[str]) -> str | list[dict[str, str]]:
    return content if isinstance(content, str) else [{"type": "text", "text": t} for t in content]


def _joined(content: str | list[str]) -> str:
    return content if isinstance(content, str) else "\n".join(content)


@st.composite
def conversations(draw: st.DrawFn) -> list[BaseMessage]:
    """A system prompt, then turns of a human message and an AI reply whose tool calls are answered."""
    out: list[BaseMessage] = []
    if draw(st.booleans()):
        out.append(SystemMessage(_content(draw(contents))))
    for turn in range(draw(st.integers(1, 4))):
        out.append(HumanMessage(_content(draw(contents))))
        calls = [
            {
                "name": draw(names),
                "args": {"n": draw(st.integers(-(2**63) + 1, 2**63 - 1))},
                "id": f"call_{turn}_{i}",
            }
            for i in range(draw(st.integers(0, 3)))
        ]
        text = draw(st.one_of(st.just(""), contents))
        out.append(AIMessage(_content(text), tool_calls=calls))
        out.extend(ToolMessage(draw(texts), tool_call_id=c["id"]) for c in calls)
    return out


def _round_trip(messages: list[BaseMessage], form: str) -> list[BaseMessage]:
    session = from_langchain(FORMS[form](messages)).unwrap()
    engine = DefaultContextEngine(tokenizer=HeuristicCounter())
    return to_langchain(engine.prepare(session, window=10**7).unwrap().messages)


def _texts(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    out = []
    for m in messages:
        text = (
            _joined(m.content)
            if isinstance(m.content, str)
            else _joined([b["text"] for b in m.content])
        )  # type: ignore[index]
        if text or m.type == "tool":
            out.append((m.type, text))
    return out


def _calls(messages: list[BaseMessage]) -> list[tuple[object, ...]]:
    return [
        (c["id"], c["name"], c["args"])
        for m in messages
        if isinstance(m, AIMessage)
        for c in m.tool_calls
    ]


@settings(max_examples=EXAMPLES, deadline=None)
@given(conversations(), st.sampled_from(sorted(FORMS)))
def test_round_trip_keeps_every_text_tool_call_id_and_name(messages, form) -> None:
    """Invariant 13 at the framework edge: LangChain → ctxrules → LangChain loses no text or tool call."""
    back = _round_trip(messages, form)
    assert _texts(back) == _texts(messages)
    assert _calls(back) == _calls(messages)
    assert [m.tool_call_id for m in back if isinstance(m, ToolMessage)] == [
        m.tool_call_id for m in messages if isinstance(m, ToolMessage)
    ]


TOOL_CONVERSATION = [
    SystemMessage("You answer questions.", id="s1"),
    HumanMessage("hi", id="h1"),
    AIMessage(
        "hello, let me look",
        id="a1",
        tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}],
    ),
    ToolMessage("found x", tool_call_id="c1", id="t1"),
    AIMessage("x it is", id="a2"),
]


@pytest.mark.parametrize("form", ["messages_to_dict", "messages_to_dict as JSON"])
def test_messages_to_dict_with_tool_messages_imports_every_text_and_id(form) -> None:
    """The form that used to import with every text empty keeps texts, node ids and tool call ids."""
    graph = from_langchain(FORMS[form](TOOL_CONVERSATION)).unwrap().graph
    rows = [
        (n.id, n.role.value, n.output, n.metadata.get("tool_call_id"))
        for n in (graph.nodes[i] for i in graph.order)
    ]
    assert rows == [
        ("s1", "system", "You answer questions.", None),
        ("h1", "user", "hi", None),
        ("a1", "assistant", "hello, let me look", None),
        ("tool:c1", "tool", "found x", "c1"),
        ("a2", "assistant", "x it is", None),
    ]


def test_messages_to_dict_text_imports_through_the_importers() -> None:
    """A messages_to_dict dump saved as JSON is detected as langchain and keeps its texts."""
    result = import_text(json.dumps(messages_to_dict(TOOL_CONVERSATION))).unwrap()
    assert result.format == "langchain"
    assert [c.output for c in result.session.branch()] == [
        "You answer questions.",
        "hi",
        "hello, let me look",
        "x it is",
    ]


def test_a_bad_message_is_a_failure_naming_it() -> None:
    """An unreadable message comes back as a Failure that says which one and why."""
    failure = from_langchain([HumanMessage("hi"), {"type": "tool", "content": "x"}]).failure()
    assert "tool_call_id" in str(failure)
    assert "2" in str(failure)


def test_a_tool_argument_no_node_can_hold_is_a_failure_not_an_exception() -> None:
    """An integer past 64 bits in tool arguments: from_langchain returns a Failure naming it."""
    messages = [
        HumanMessage("0"),
        AIMessage("", tool_calls=[{"name": "f", "args": {"n": 2**64}, "id": "c1"}]),
        ToolMessage("0", tool_call_id="c1"),
    ]
    result = from_langchain(messages)
    assert "does not fit 64 bits" in result.failure().reason
