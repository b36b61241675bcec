"""The Anthropic adapter: exact output, SDK validity, cache breakpoints and invariant 11."""

from __future__ import annotations

import re
from typing import Any

import pytest
from anthropic.types import MessageParam, TextBlockParam
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from ctxrules.check import protocol_valid
from ctxrules.commit import ContextCommit
from ctxrules.render import render_commit
from ctxrules.render.anthropic import AnthropicRequest, to_anthropic, tool_input
from ctxrules.render.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from ctxrules.testing import commits
from ctxrules.testing.fake_sdk import materialized
from ctxrules.testing.messages import conversations

# Kept alive for the whole module: pydantic validates ``Iterable`` fields lazily, and
# consuming them after their adapter is collected crashes pydantic-core.
MESSAGES = TypeAdapter(list[MessageParam])
SYSTEM_BLOCKS = TypeAdapter(list[TextBlockParam])

# The Messages API's pattern for tool ids.
TOOL_ID = re.compile(r"[a-zA-Z0-9_-]+")

# --- checks


def conforms(request: AnthropicRequest) -> bool:
    """Whether the request validates as SDK params with nothing dropped or coerced."""
    try:
        system = materialized(SYSTEM_BLOCKS.validate_python(request.system))
        messages = materialized(MESSAGES.validate_python(request.messages))
    except ValidationError:
        return False
    return system == request.system and messages == request.messages


def _content(message: dict[str, object]) -> list[dict[str, Any]]:
    """The content blocks of one API message."""
    content = message["content"]
    assert isinstance(content, list)
    return content


def _blocks(message: dict[str, object], kind: str) -> list[dict[str, Any]]:
    """The content blocks of type ``kind`` in one API message."""
    return [block for block in _content(message) if block["type"] == kind]


def assert_protocol(request: AnthropicRequest) -> None:
    """Roles alternate from user; no blank text; invariant 11: each call answered next, results first."""
    roles = [message["role"] for message in request.messages]
    assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] * (len(roles) % 2)
    for system_block in request.system:
        assert str(system_block["text"]).strip()
    sent: set[str] = set()
    expected: list[str] = []  # the ids the next user message must answer, in call order
    for message in request.messages:
        content = _content(message)
        assert content, "empty content"
        for block in _blocks(message, "text"):
            assert block["text"].strip(), "blank text"
        results = [block["tool_use_id"] for block in _blocks(message, "tool_result")]
        assert sorted(results) == sorted(expected), (results, expected)
        assert [block["type"] for block in content[: len(results)]] == ["tool_result"] * len(
            results
        ), "tool results must come first"
        expected = [block["id"] for block in _blocks(message, "tool_use")]
        assert all(TOOL_ID.fullmatch(tool_id) for tool_id in expected), expected
        assert sent.isdisjoint(expected), expected
        assert len(set(expected)) == len(expected), expected
        sent.update(expected)
    assert not expected, f"calls without results: {expected}"


def _all_text(request: AnthropicRequest) -> str:
    """Every text and tool result content of the request, one per line."""
    blocks = request.system + [b for m in request.messages for b in _content(m)]
    return "\n".join(str(block.get("text", block.get("content", ""))) for block in blocks)


def _breakpoints(request: AnthropicRequest) -> list[tuple[str, dict[str, object]]]:
    """Every block in cache order (system, then messages), tagged with where it sits."""
    tagged = [("system", block) for block in request.system]
    for index, message in enumerate(request.messages):
        tagged.extend((f"{index}:{message['role']}", b) for b in _content(message))
    return tagged


def _prefix(request: AnthropicRequest) -> list[tuple[str, dict[str, object]]]:
    """The blocks up to and including the last cache breakpoint, or none."""
    tagged = _breakpoints(request)
    marked = [pos for pos, (_, block) in enumerate(tagged) if "cache_control" in block]
    return tagged[: marked[-1] + 1] if marked else []


# --- validation can fail


@pytest.mark.parametrize(
    ("system", "messages"),
    [
        ([], [{"role": "robot", "content": "x"}]),
        ([], [{"role": "user", "content": [{"type": "tool_use", "id": "c1", "name": "ls"}]}]),
        ([], [{"role": "user", "content": [{"type": "text", "text": "x", "bogus": 1}]}]),
        ([], [{"role": "user", "content": "x", "bogus": 1}]),
        ([{"type": "text"}], []),
        ([{"type": "text", "text": "x", "cache_control": {"type": "forever"}}], []),
    ],
    ids=[
        "unknown role",
        "lazy block missing input",
        "extra block key",
        "extra message key",
        "system without text",
        "bad cache_control",
    ],
)
def test_validation_rejects_a_broken_request(
    system: list[dict[str, object]], messages: list[dict[str, object]]
) -> None:
    """The SDK check fails on a broken request, including extra keys and lazily checked blocks."""
    assert not conforms(AnthropicRequest(system=system, messages=messages))


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "assistant", "content": [{"type": "text", "text": "x"}]}],
        [
            {"role": "user", "content": [{"type": "text", "text": "x"}]},
            {"role": "user", "content": [{"type": "text", "text": "y"}]},
        ],
        [
            {"role": "user", "content": [{"type": "text", "text": "x"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "ls"}]},
        ],
        [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1"}]},
        ],
        [
            {"role": "user", "content": [{"type": "text", "text": "x"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "ls"}]},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "x"},
                    {"type": "tool_result", "tool_use_id": "c1"},
                ],
            },
        ],
        [{"role": "user", "content": [{"type": "text", "text": " "}]}],
    ],
    ids=[
        "assistant first",
        "same role twice",
        "call unanswered",
        "orphan result",
        "text first",
        "blank",
    ],
)
def test_protocol_check_rejects_a_bad_conversation(messages: list[dict[str, object]]) -> None:
    """The protocol check (roles, blank text, invariant 11) fails on each kind of fault."""
    with pytest.raises(AssertionError):
        assert_protocol(AnthropicRequest(system=[], messages=messages))


# --- properties


@given(conversations())
def test_invariant_11_no_orphans_and_roles_alternate(messages: list[Message]) -> None:
    """Invariant 11: each call is answered in the next message, results first; roles alternate."""
    assert_protocol(to_anthropic(messages))


@given(conversations(), st.booleans(), st.data())
def test_output_validates_against_the_sdk(
    messages: list[Message], cache_system: bool, data: st.DataObject
) -> None:
    """The request validates as SDK ``MessageParam`` and ``TextBlockParam`` lists, nothing dropped."""
    end = data.draw(st.none() | st.integers(0, len(messages) - 1)) if messages else None
    request = to_anthropic(messages, cache_system=cache_system, cache_prefix_end=end)
    assert conforms(request)
    assert len([b for _, b in _breakpoints(request) if "cache_control" in b]) <= 2


@given(conversations())
def test_text_is_preserved(messages: list[Message]) -> None:
    """Every non-blank text and tool result of the input appears in the output."""
    text = _all_text(to_anthropic(messages))
    for message in messages:
        for block in message.blocks:
            if isinstance(block, TextBlock | ToolResultBlock) and block.text.strip():
                assert block.text in text


@given(conversations(malformed=False))
def test_invariant_11_well_formed_pairs_are_kept(messages: list[Message]) -> None:
    """Invariant 11: nothing is degraded when every call has its result."""
    request = to_anthropic(messages)
    uses = [block for message in request.messages for block in _blocks(message, "tool_use")]
    assert len(uses) == sum(
        isinstance(block, ToolUseBlock) for message in messages for block in message.blocks
    )
    assert "[tool " not in _all_text(request)


@given(conversations(malformed=False), conversations(malformed=False))
def test_cache_prefix_is_stable_when_the_conversation_grows(
    before: list[Message], after: list[Message]
) -> None:
    """The blocks up to the prefix breakpoint do not change when later turns are appended."""
    after = [message for message in after if message.role != "system"]
    assume(before)
    end = len(before) - 1
    grown = to_anthropic(before + after, cache_system=True, cache_prefix_end=end)
    assert _prefix(to_anthropic(before, cache_system=True, cache_prefix_end=end)) == _prefix(grown)


# --- examples

CONVERSATION = [
    Message("system", (TextBlock("Be brief."),)),
    Message("assistant", (TextBlock("Summary: the user asked about a.py."),)),
    Message("user", (TextBlock("What is in a.py?"),)),
    Message("assistant", (TextBlock("Let me look."),)),
    Message("assistant", (ToolUseBlock("c1", "read_file", '{"path": "a.py"}'),)),
    Message("tool", (ToolResultBlock("c1", "print(1)"),)),
    Message("user", (TextBlock("And b.py?"),)),
    Message("assistant", (ToolUseBlock("c2", "read_file", '{"path": "b.p'),)),
    Message("tool", (ToolResultBlock("c2", ""),)),
]


def test_example_conversation_with_a_tool_call() -> None:
    """A small conversation maps to this exact request: continued, merged, results first."""
    request = to_anthropic(CONVERSATION)
    assert request.system == [{"type": "text", "text": "Be brief."}]
    assert request.messages == [
        {"role": "user", "content": [{"type": "text", "text": "(continued)"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Summary: the user asked about a.py."}],
        },
        {"role": "user", "content": [{"type": "text", "text": "What is in a.py?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a.py"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "print(1)"},
                {"type": "text", "text": "And b.py?"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "c2",
                    "name": "read_file",
                    "input": {"arguments": '{"path": "b.p'},
                },
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c2"}]},
    ]


def test_example_degradation() -> None:
    """An orphan result, a lone call and a pair with an id the API refuses all become text."""
    request = to_anthropic(
        [
            Message("user", (TextBlock("Go."),)),
            Message("tool", (ToolResultBlock("c9", "stale"),)),
            Message("assistant", (ToolUseBlock("c1", "ls", "{}"), ToolUseBlock("c 2", "ls", "[]"))),
            Message("tool", (ToolResultBlock("c 2", "b"),)),
            Message("user", (TextBlock("   "),)),
        ]
    )
    assert request.messages == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Go."},
                {"type": "text", "text": "[tool result c9] stale"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "[tool call ls({})]"},
                {"type": "text", "text": "[tool call ls([])]"},
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": "[tool result c 2] b"}]},
    ]


def test_example_degraded_result_follows_the_kept_ones() -> None:
    """A stray result in the same tool message as a kept one is sent as text after it."""
    request = to_anthropic(
        [
            Message("user", (TextBlock("Go."),)),
            Message("assistant", (ToolUseBlock("c1", "ls", "{}"),)),
            Message("tool", (ToolResultBlock("c9", "stale"), ToolResultBlock("c1", "a"))),
        ]
    )
    assert request.messages[-1] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "a"},
            {"type": "text", "text": "[tool result c9] stale"},
        ],
    }


EPHEMERAL = {"type": "ephemeral"}
CACHED = [
    Message("system", (TextBlock("Rules."), TextBlock("Tools."))),
    Message("user", (TextBlock("a"),)),
    Message("user", (TextBlock("b"), TextBlock(" "))),
    Message("system", (TextBlock("Late rule."),)),
    Message("assistant", (ToolUseBlock("c1", "ls", "{}"),)),
    Message("tool", (ToolResultBlock("c1", "x"),)),
    Message("user", (TextBlock("c"),)),
]


def test_example_cache_breakpoints() -> None:
    """The system breakpoint sits on the last system block, the prefix one on the end of the prefix."""
    request = to_anthropic(CACHED, cache_system=True, cache_prefix_end=1)
    assert request.system == [
        {"type": "text", "text": "Rules."},
        {"type": "text", "text": "Tools."},
        {"type": "text", "text": "Late rule.", "cache_control": EPHEMERAL},
    ]
    assert request.messages[0] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "a", "cache_control": EPHEMERAL},
            {"type": "text", "text": "b"},
        ],
    }
    assert all("cache_control" not in b for m in request.messages[1:] for b in _content(m))


@pytest.mark.parametrize(
    ("end", "place"),
    [
        (0, ("system", "Tools.")),
        (1, ("user", "a")),
        (2, ("user", "b")),
        (3, ("user", "b")),
        (4, ("assistant", "c1")),
        (5, ("user", "c1")),
        (6, ("user", "c")),
    ],
)
def test_example_cache_prefix_end_maps_through_merging(end: int, place: tuple[str, str]) -> None:
    """The prefix breakpoint lands on the last block that came from ``messages[:end + 1]``."""
    request = to_anthropic(CACHED, cache_prefix_end=end)
    marked = [(where, b) for where, b in _breakpoints(request) if "cache_control" in b]
    assert len(marked) == 1
    where, block = marked[0]
    label = block.get("text", block.get("id", block.get("tool_use_id")))
    assert (where.split(":")[-1], label) == place


def test_example_cache_prefix_end_on_continued() -> None:
    """A breakpoint before the first kept message of a conversation opened by the assistant is absent."""
    messages = [Message("user", (TextBlock(""),)), Message("assistant", (TextBlock("hi"),))]
    assert _prefix(to_anthropic(messages, cache_prefix_end=0)) == []
    request = to_anthropic(messages, cache_prefix_end=1)
    assert request.messages[0] == {
        "role": "user",
        "content": [{"type": "text", "text": "(continued)"}],
    }
    assert request.messages[1]["content"] == [
        {"type": "text", "text": "hi", "cache_control": EPHEMERAL}
    ]


def test_tool_input_refuses_non_json_constants() -> None:
    """Arguments that parse only through Python's NaN extension are kept as raw text."""
    assert tool_input('{"x": NaN}') == {"arguments": '{"x": NaN}'}
    assert tool_input("[1]") == {"arguments": "[1]"}
    assert tool_input("[" * 100_000) == {"arguments": "[" * 100_000}


@pytest.mark.parametrize(
    ("messages", "kwargs", "expected"),
    [
        (
            [],
            {"cache_prefix_end": 0},
            (
                "cache_prefix_end=0 is out of range; pass None or an index of messages,"
                " 0 <= cache_prefix_end < 0"
            ),
        ),
        (
            [Message("user", ())],
            {"cache_prefix_end": -1},
            (
                "cache_prefix_end=-1 is out of range; pass None or an index of messages,"
                " 0 <= cache_prefix_end < 1"
            ),
        ),
        (
            [Message("developer", ())],
            {},
            (
                "messages[0].role='developer' is not a neutral role;"
                " use one of system, user, assistant, tool"
            ),
        ),
    ],
    ids=["end past the messages", "negative end", "unknown role"],
)
def test_invalid_arguments(messages: list[Message], kwargs: dict[str, Any], expected: str) -> None:
    """Each invalid argument raises ValueError with this exact text."""
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        to_anthropic(messages, **kwargs)


@given(commits())
def test_invariant_11_random_commits_render_without_orphans(commit: ContextCommit) -> None:
    """Invariant 11: for random commits in every item state, the Anthropic request has no orphans."""
    messages = render_commit(commit)
    assert protocol_valid(messages) == []
    request = to_anthropic(
        messages, cache_system=True, cache_prefix_end=len(messages) - 1 if messages else None
    )
    assert_protocol(request)
    assert conforms(request)
