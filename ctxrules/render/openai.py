"""Translate neutral messages into OpenAI Chat Completions message params."""

from __future__ import annotations

from collections.abc import Sequence

from ctxrules.render.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from ctxrules.render.pairing import blocks_of, degrade_orphans, run_end


def to_openai(messages: Sequence[Message]) -> list[dict[str, object]]:
    """Chat Completions ``messages``: consecutive assistant messages merge into one.

    Text blocks join with a blank line; a degraded tool result is sent as user text after
    the tool messages of its turn, and a message with nothing to say is dropped.

    >>> to_openai([
    ...     Message("user", (TextBlock("List the files."),)),
    ...     Message("assistant", (ToolUseBlock("c1", "ls", '{"path": "."}'),)),
    ...     Message("tool", (ToolResultBlock("c1", "a.py"),)),
    ... ])  # doctest: +NORMALIZE_WHITESPACE
    [{'role': 'user', 'content': 'List the files.'},
     {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'c1', 'type': 'function',
       'function': {'name': 'ls', 'arguments': '{"path": "."}'}}]},
     {'role': 'tool', 'tool_call_id': 'c1', 'content': 'a.py'}]
    """
    repaired = degrade_orphans(messages)
    out: list[dict[str, object]] = []
    start = 0
    while start < len(repaired):
        role = repaired[start].role
        end = run_end(repaired, start, role)
        run = repaired[start:end]
        if role == "assistant":
            out.extend(_assistant(run))
        elif role == "tool":
            out.extend(
                {"role": "tool", "tool_call_id": block.tool_use_id, "content": block.text}
                for block in blocks_of(run, ToolResultBlock)
            )
            # Degraded results wait until the turn's tool messages are done: text between
            # them would cut the later results off from their calls.
            out.extend(_text_message("user", _texts(run)))
        else:
            for message in run:
                out.extend(_text_message(role, _texts((message,))))
        start = end
    return out


def _assistant(run: Sequence[Message]) -> list[dict[str, object]]:
    """One assistant message for a run of them, or none when it would be empty."""
    texts = _texts(run)
    calls = [
        {
            "id": block.id,
            "type": "function",
            "function": {"name": block.name, "arguments": block.arguments},
        }
        for block in blocks_of(run, ToolUseBlock)
    ]
    if not calls:
        return _text_message("assistant", texts)
    return [{"role": "assistant", "content": "\n\n".join(texts) or None, "tool_calls": calls}]


def _text_message(role: str, texts: list[str]) -> list[dict[str, object]]:
    """A message of the joined texts, or none when there are none."""
    return [{"role": role, "content": "\n\n".join(texts)}] if texts else []


def _texts(messages: Sequence[Message]) -> list[str]:
    """The non-empty texts of the messages' text blocks, in order."""
    return [block.text for block in blocks_of(messages, TextBlock) if block.text]
