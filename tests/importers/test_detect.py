"""Format detection from text or first records, and the override that skips it."""

from __future__ import annotations

import json

import pytest

from ctxrules.dag import Session, graph_to_jsonl
from ctxrules.importers import FORMATS, detect_format, import_text

CLAUDE = '{"type": "user", "uuid": "u1", "parentUuid": null, "message": {"content": "hi"}}'
SNAPSHOT = '{"type": "file-history-snapshot", "messageId": "m", "snapshot": {}}'
CTXRULES = graph_to_jsonl(Session("d").send("user", "hi").unwrap().graph)

#: name, text, the format detected (None: unknown).
TEXTS: list[tuple[str, str, str | None]] = [
    ("Claude Code JSON Lines", CLAUDE + "\n" + CLAUDE, "claude-code"),
    ("Claude Code starting with a snapshot", SNAPSHOT + "\n" + CLAUDE, "claude-code"),
    ("one-line Claude Code file", CLAUDE, "claude-code"),
    ("Claude Code after a broken first line", "{oops\n" + CLAUDE, "claude-code"),
    ("ctxrules JSON Lines", CTXRULES, "ctxrules-jsonl"),
    ("mini-swe-agent trajectory", '{"info": {}, "messages": [{"role": "system", "content": "x"}]}', "openai-chat"),
    ("empty trajectory", '{"messages": [], "trajectory_format": "mini-swe-agent-1.1"}', "openai-chat"),
    ("bare OpenAI list", '[{"role": "user", "content": "x"}]', "openai-chat"),
    ("LangGraph thread state", '{"values": {"messages": []}}', "langchain"),
    ("bare LangChain list", '[{"type": "human", "content": "x"}]', "langchain"),
    ("LangChain constructor", '[{"lc": 1, "type": "constructor", "id": ["HumanMessage"], "kwargs": {}}]', "langchain"),
    ("plain text", "hello", None),
    ("an empty list", "[]", None),
    ("OpenAI messages as JSON Lines", '{"role": "user", "content": "x"}\n{"role": "assistant", "content": "y"}', None),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), [t[1:] for t in TEXTS], ids=[t[0] for t in TEXTS])
def test_detect_format_from_text(text: str, expected: str | None) -> None:
    """Each log shape is detected as its format, or as unknown."""
    assert detect_format(text) == expected


def test_detect_format_from_first_records() -> None:
    """Already-parsed records are classified by the first one that looks like a known format."""
    assert detect_format([json.loads(SNAPSHOT), json.loads(CLAUDE)]) == "claude-code"
    assert detect_format([{"x": 1}, {"role": "tool", "content": ""}]) == "openai-chat"
    assert detect_format([]) is None


def test_override_skips_detection() -> None:
    """A format given by the caller is used even where detection would pick another."""
    text = '[{"role": "user", "content": "x", "type": "human"}]'
    assert detect_format(text) == "openai-chat"
    assert import_text(text, format="langchain").unwrap().format == "langchain"


def test_every_format_is_accepted_as_override() -> None:
    """Each name in FORMATS is a valid ``format=``; a wrong one fails before reading anything."""
    for name in FORMATS:
        failure = import_text("", format=name).failure()
        assert str(failure) == "<text>: empty input: nothing to import"
