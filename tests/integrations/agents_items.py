"""Responses input items read back as ctxrules messages, independently of the library's reader."""

from __future__ import annotations

from typing import Any

from ctxrules.render import Message, TextBlock, ToolResultBlock, ToolUseBlock


def neutral(items: list[Any]) -> tuple[Message, ...]:
    """Responses input items as ctxrules's neutral messages, rebuilt here independently."""
    out: list[Message] = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            block = ToolUseBlock(item["call_id"], item["name"], item["arguments"])
            out.append(Message("assistant", (block,)))
        elif kind == "function_call_output":
            out.append(Message("tool", (ToolResultBlock(item["call_id"], str(item["output"])),)))
        else:
            content = item["content"]
            text = content if isinstance(content, str) else "".join(p["text"] for p in content)
            out.append(Message(item["role"], (TextBlock(text),)))
    return tuple(out)
