"""Telling the formats apart from the text of a log or from its first records."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import attrs

from ctxrules.dag.jsonl import CALL_FIELDS
from ctxrules.importers.formats import Format
from ctxrules.importers.langchain import KINDS, TOOL_KINDS, plain
from ctxrules.importers.records import Unreadable, found, json_lines, parse_json

#: How many records detection looks at before it gives up.
LOOKAHEAD = 20

_CLAUDE_TYPES = frozenset(
    {"user", "assistant", "system", "progress", "file-history-snapshot", "summary"}
)
_CLAUDE_KEYS = ("uuid", "parentUuid", "sessionId", "messageId", "leafUuid")
_CTXRULES_FIELDS = frozenset(CALL_FIELDS)
_OPENAI_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_LINE_FORMATS = ("claude-code", "ctxrules-jsonl")


def record_format(record: object) -> Format | None:
    """The format one record or message belongs to, or None.

    >>> record_format({"type": "progress", "uuid": "p1", "parentUuid": None})
    'claude-code'
    >>> record_format({"id": "n1", "role": "user", "output": "hi"})
    'ctxrules-jsonl'
    >>> record_format({"role": "user", "content": "hi"}), record_format({"type": "human", "content": "hi"})
    ('openai-chat', 'langchain')
    """
    # A LangChain message object reads as its plain dict.
    record = plain(record)
    if not isinstance(record, dict):
        return None
    # Only strings are looked up: a list or an object in these fields is not hashable.
    kind = record.get("type") if isinstance(record.get("type"), str) else None
    role = record.get("role") if isinstance(record.get("role"), str) else None
    if kind in _CLAUDE_TYPES and any(key in record for key in _CLAUDE_KEYS):
        return "claude-code"
    if "id" in record and "role" in record and record.keys() <= _CTXRULES_FIELDS:
        return "ctxrules-jsonl"
    if role in _OPENAI_ROLES:
        return "openai-chat"
    if (record.get("lc") == 1 and kind == "constructor") or kind in KINDS or kind in TOOL_KINDS:
        return "langchain"
    return None


def _messages_format(messages: Sequence[object]) -> Format | None:
    for message in itertools.islice(messages, LOOKAHEAD):
        guess = record_format(message)
        if guess in ("openai-chat", "langchain"):
            return guess
    return None


def document_format(document: object) -> Format | None:
    """The format of a whole JSON document (a one-line JSON Lines file is one too), or None."""
    if isinstance(document, list):
        return _messages_format(document)
    if not isinstance(document, dict):
        return None
    single = record_format(document)
    if single in _LINE_FORMATS:
        return single
    values = document.get("values")
    if isinstance(values, dict) and isinstance(values.get("messages"), list):
        return "langchain"
    messages = document.get("messages")
    if isinstance(messages, list) and not messages and "trajectory_format" in document:
        return "openai-chat"
    return _messages_format(messages) if isinstance(messages, list) else None


@attrs.frozen
class Sniffed:
    """What detection found: the format, the parsed document for the JSON formats, or a hint."""

    format: Format | None
    document: object = None
    hint: str = ""


def _shape(value: object) -> str:
    if isinstance(value, dict):
        return f"an object with keys {sorted(value)[:8]}"
    if isinstance(value, list):
        return f"a list whose first item is {_shape(value[0])}" if value else "an empty list"
    return found(value)


def sniff(text: str) -> Sniffed:
    """Detect the format of ``text``; keep the parsed document so it is not parsed twice."""
    document = parse_json(text)
    if not isinstance(document, Unreadable):
        guess = document_format(document)
        return Sniffed(
            guess,
            document,
            "" if guess else f"the text is JSON but not a known log: {_shape(document)}",
        )
    hint = ""
    for line, value in itertools.islice(json_lines(text), LOOKAHEAD):
        guess = record_format(value)
        if guess in _LINE_FORMATS:
            return Sniffed(guess)
        if not hint:
            hint = (
                f"line {line} is not JSON ({value.reason})"
                if isinstance(value, Unreadable)
                else f"line {line} holds {_shape(value)}"
            )
    return Sniffed(None, hint=hint)


def detect_format(source: str | Sequence[object]) -> Format | None:
    r"""The format of a log's text, or of its first records already parsed; None if unknown.

    >>> detect_format('{"type": "user", "uuid": "u1", "parentUuid": null}\n{"type": "progress"}')
    'claude-code'
    >>> detect_format('{"info": {}, "messages": [{"role": "system", "content": "hi"}]}')
    'openai-chat'
    >>> detect_format([{"type": "human", "content": "hi"}]), detect_format("hello")
    ('langchain', None)
    """
    if isinstance(source, str):
        return sniff(source).format
    return next(
        (guess for r in itertools.islice(source, LOOKAHEAD) if (guess := record_format(r))), None
    )
