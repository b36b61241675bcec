"""The OpenAI adapter: exact output, SDK validity and invariant 11 (no orphans)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given
from openai.types.chat import ChatCompletionMessageParam
from pydantic import TypeAdapter, ValidationError

from ctxrules.check import protocol_valid
from ctxrules.commit import ContextCommit
from ctxrules.render import render_commit
from ctxrules.render.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from ctxrules.render.openai import to_openai
from ctxrules.render.pairing import degrade_orphans
from ctxrules.testing import commits
from ctxrules.testing.fake_sdk import materialized
from ctxrules.testing.messages import conversations

# Kept alive for the whole module: pydantic validates ``Iterable`` fields lazily, and
# consuming them after their adapter is collected crashes pydantic-core.
CHAT_MESSAGES = TypeAdapter(list[ChatCompletionMessageParam])

# --- checks


def conforms(out: list[dict[str, object]]) -> bool:
    """Whether ``out`` validates as SDK message params with nothing dropped or coerced."""
    try:
        return materialized(CHAT_MESSAGES.validate_python(out)) == out
    except ValidationError:
        return False


def assert_no_orphans(out: list[dict[str, object]]) -> None:
    """Invariant 11: every tool message answers a call of the assistant message before it."""
    pending: set[object] = set()
    sent: set[object] = set()
    for message in out:
        if message["role"] == "tool":
            assert message["tool_call_id"] in pending, message
            pending.remove(message["tool_call_id"])
            continue
        assert not pending, f"calls without results: {pending}"
        if "tool_calls" in message:
            calls = message["tool_calls"]
            assert isinstance(calls, list)
            assert calls, "an empty tool_calls list is rejected by the API"
            ids = [call["id"] for call in calls]
            assert len(set(ids)) == len(ids), ids
            assert sent.isdisjoint(ids), ids
            pending = set(ids)
            sent |= pending
    assert not pending, f"calls without results: {pending}"


def _all_text(out: list[dict[str, object]]) -> str:
    """Every string content of the output, one per line."""
    return "\n".join(str(message["content"]) for message in out)


def _input_texts(messages: Sequence[Message]) -> Iterator[str]:
    """The texts of the input's text blocks and tool results."""
    for message in messages:
        for block in message.blocks:
            if isinstance(block, TextBlock | ToolResultBlock):
                yield block.text


# --- validation can fail


@pytest.mark.parametrize(
    "bad",
    [
        {"role": "tool", "content": "x"},
        {"role": "robot", "content": "x"},
        {"role": "user", "content": "x", "tool_call_id": "c1"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls"}}],
        },
    ],
    ids=["no tool_call_id", "unknown role", "extra key", "lazy field missing arguments"],
)
def test_validation_rejects_a_broken_message(bad: dict[str, object]) -> None:
    """The SDK check fails on a broken message, including an extra key and a lazily checked field."""
    assert not conforms([bad])


def test_invariant_11_check_rejects_an_orphan() -> None:
    """Invariant 11's check fails on a tool message whose call is missing."""
    with pytest.raises(AssertionError):
        assert_no_orphans(
            [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "c1"}]
        )


# --- properties


@given(conversations())
def test_invariant_11_no_orphans(messages: list[Message]) -> None:
    """Invariant 11: every tool result has its call just before it, and every call its result."""
    assert_no_orphans(to_openai(messages))


@given(conversations())
def test_output_validates_against_the_sdk(messages: list[Message]) -> None:
    """The output validates as ``list[ChatCompletionMessageParam]`` with nothing dropped."""
    assert conforms(to_openai(messages))


@given(conversations())
def test_text_is_preserved(messages: list[Message]) -> None:
    """Every non-empty text and tool result of the input appears in the output."""
    text = _all_text(to_openai(messages))
    for piece in _input_texts(messages):
        assert piece in text


@given(conversations(malformed=False))
def test_invariant_11_well_formed_pairs_are_kept(messages: list[Message]) -> None:
    """Invariant 11: nothing is degraded when every call has its result."""
    out = to_openai(messages)
    calls = [message["tool_calls"] for message in out if "tool_calls" in message]
    assert sum(len(c) for c in calls if isinstance(c, list)) == sum(
        isinstance(block, ToolUseBlock) for message in messages for block in message.blocks
    )
    assert "[tool " not in _all_text(out)


@given(conversations())
def test_invariant_11_repair_keeps_length_roles_and_is_idempotent(messages: list[Message]) -> None:
    """Invariant 11: the repair changes blocks only, and repairing twice changes nothing more."""
    repaired = degrade_orphans(messages)
    assert [m.role for m in repaired] == [m.role for m in messages]
    assert degrade_orphans(repaired) == repaired


# --- examples

CONVERSATION = [
    Message("system", (TextBlock("Be brief."),)),
    Message("user", (TextBlock("What is in a.py?"),)),
    Message("assistant", (TextBlock("Let me look."),)),
    Message("assistant", (ToolUseBlock("c1", "read_file", '{"path": "a.py"}'),)),
    Message("tool", (ToolResultBlock("c1", "print(1)"),)),
    Message("assistant", (TextBlock("It prints 1."), TextBlock("Anything else?"))),
    Message("user", (TextBlock("No."),)),
    Message("user", (TextBlock("Thanks."),)),
]


def test_example_conversation_with_a_tool_call() -> None:
    """A small conversation maps to these exact params: assistant text and call merge."""
    assert to_openai(CONVERSATION) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is in a.py?"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "print(1)"},
        {"role": "assistant", "content": "It prints 1.\n\nAnything else?"},
        {"role": "user", "content": "No."},
        {"role": "user", "content": "Thanks."},
    ]


def test_example_parallel_calls_in_separate_tool_messages() -> None:
    """Two calls answered in reverse order by two tool messages keep both pairs."""
    out = to_openai(
        [
            Message("assistant", (ToolUseBlock("c1", "ls", "{}"), ToolUseBlock("c2", "ls", "{}"))),
            Message("tool", (ToolResultBlock("c2", "b"),)),
            Message("tool", (ToolResultBlock("c1", "a"),)),
        ]
    )
    assert [m.get("tool_call_id") for m in out] == [None, "c2", "c1"]
    assert_no_orphans(out)


def test_example_degradation() -> None:
    """A call with no result and a result with no call become text; the good pair is kept."""
    out = to_openai(
        [
            Message("user", (TextBlock("Go."),)),
            Message("assistant", (ToolUseBlock("c1", "ls", '{"path": "src/ma…'),)),
            Message("user", (TextBlock("Stop."),)),
            Message("assistant", (ToolUseBlock("c2", "ls", "{}"),)),
            Message("tool", (ToolResultBlock("c2", "a.py"), ToolResultBlock("c9", "stale"))),
            Message("tool", (ToolResultBlock("c3", "late"),)),
        ]
    )
    assert out == [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": '[tool call ls({"path": "src/ma…)]'},
        {"role": "user", "content": "Stop."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "a.py"},
        {"role": "user", "content": "[tool result c9] stale\n\n[tool result c3] late"},
    ]


def test_example_duplicate_id_degrades_the_later_pair() -> None:
    """A call id used by an earlier pair is degraded, with its result, so ids stay unique."""
    pair = [
        Message("assistant", (ToolUseBlock("c1", "ls", "{}"),)),
        Message("tool", (ToolResultBlock("c1", "a"),)),
    ]
    out = to_openai(pair + pair)
    assert out[2:] == [
        {"role": "assistant", "content": "[tool call ls({})]"},
        {"role": "user", "content": "[tool result c1] a"},
    ]


def test_example_empty_messages_are_dropped() -> None:
    """Messages with no text and no call are dropped; empty blocks add no separator."""
    out = to_openai(
        [
            Message("user", (TextBlock(""),)),
            Message("assistant", ()),
            Message("user", (TextBlock("a"), TextBlock(""), TextBlock("b"))),
        ]
    )
    assert out == [{"role": "user", "content": "a\n\nb"}]


def test_unknown_role_is_refused() -> None:
    """A role outside the neutral four raises with the index, the value and the choices."""
    expected = "messages[1].role='developer' is not a neutral role; use one of system, user, assistant, tool"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        to_openai([Message("user", ()), Message("developer", (TextBlock("x"),))])


@given(commits())
def test_invariant_11_random_commits_render_without_orphans(commit: ContextCommit) -> None:
    """Invariant 11: for random commits in every item state, the OpenAI request has no orphans."""
    messages = render_commit(commit)
    assert protocol_valid(messages) == []
    out = to_openai(messages)
    assert_no_orphans(out)
    assert conforms(out)
    assert sum(1 for m in out if m["role"] == "tool") == sum(
        1 for i in commit.items if i.is_tool and i.visible and i.tool_call_id and i.tool_name
    )
