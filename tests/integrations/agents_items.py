"""Responses input items read back as ctxrules messages, independently of the library's reader."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from ctxrules.render import Message, TextBlock, ToolResultBlock, ToolUseBlock


class Reads:
    """A fake Agents SDK model: calls ``read_file`` ``calls`` times per run, then answers.

    Every input it was given is kept in ``inputs``. (Subclassed with the SDK's ``Model``
    by the tests, which import the SDK only when the extra is installed.)
    """

    def __init__(self, calls: int = 1) -> None:
        self.calls = calls
        self.inputs: list[list[Any]] = []

    async def get_response(self, system_instructions, input, *args: Any, **kwargs: Any):  # noqa: A002, ARG002 - the Model interface
        from agents import ModelResponse, Usage  # noqa: PLC0415 - the extra is optional
        from openai.types.responses import (  # noqa: PLC0415
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
        )

        items = [input] if isinstance(input, str) else list(input)
        self.inputs.append(items)
        turn = len(self.inputs)
        recent = items[-2 * self.calls :]
        answered = sum(1 for item in recent if item.get("type") == "function_call_output")
        if items[-1].get("type") != "function_call_output" or answered < self.calls:
            output: Any = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"call_{turn}",
                name="read_file",
                arguments=json.dumps({"part": turn}),
            )
        else:
            text = ResponseOutputText(type="output_text", text=f"Read {turn}.", annotations=[])
            output = ResponseOutputMessage(
                id=f"msg_{turn}",
                type="message",
                role="assistant",
                status="completed",
                content=[text],
            )
        return ModelResponse(output=[output], usage=Usage(requests=1), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


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


def replied(*calls: tuple[str, str, dict[str, object]], text: str = "") -> Any:
    """A model response: tool calls ``(call id, name, arguments)``, or else an answer of ``text``."""
    from agents import ModelResponse, Usage  # noqa: PLC0415 - the extra is optional
    from openai.types.responses import (  # noqa: PLC0415
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    output: list[Any] = [
        ResponseFunctionToolCall(
            type="function_call", call_id=call_id, name=name, arguments=json.dumps(arguments)
        )
        for call_id, name, arguments in calls
    ]
    if not output:
        said = ResponseOutputText(type="output_text", annotations=[], text=text)
        output = [
            ResponseOutputMessage(
                id="m", type="message", role="assistant", status="completed", content=[said]
            )
        ]
    return ModelResponse(output=output, usage=Usage(), response_id=None)
