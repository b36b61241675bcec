"""The content blocks of Claude Code messages, checked and sorted before anything is built."""

from __future__ import annotations

import attrs

from ctxrules.importers.records import Unreadable, found, part_text, text_of


@attrs.frozen
class ToolUse:
    """A ``tool_use`` block: the call id, the tool name and its input."""

    id: str
    name: str
    input: object


@attrs.frozen
class ToolResult:
    """A ``tool_result`` block: the call it answers, its text, whether it is an error."""

    tool_use_id: str
    text: str
    is_error: bool


@attrs.define
class AssistantBlocks:
    """The blocks of one assistant record, by kind; ``other`` names the types kept aside."""

    texts: list[str] = attrs.Factory(list)
    thinking: list[str] = attrs.Factory(list)
    tool_uses: list[ToolUse] = attrs.Factory(list)
    other: list[str] = attrs.Factory(list)


def _where(index: int, field: str = "") -> str:
    return f"message.content[{index}]{'.' + field if field else ''}"


def _string(block: dict[str, object], index: int, field: str) -> str | Unreadable:
    value = block.get(field)
    if isinstance(value, str):
        return value
    return Unreadable(f"{_where(index, field)}: expected a string, found {found(value)}")


def _assistant_block(blocks: AssistantBlocks, index: int, block: dict[str, object]) -> str | None:
    kind = block.get("type")
    # An OpenAI refusal part holds, in the field named as its type, what the model answered.
    if kind in ("text", "thinking", "refusal"):
        text = _string(block, index, str(kind))
        if isinstance(text, Unreadable):
            return text.reason
        (blocks.thinking if kind == "thinking" else blocks.texts).append(text)
        return None
    if kind != "tool_use":
        blocks.other.append(str(kind))
        return None
    name = _string(block, index, "name")
    if isinstance(name, Unreadable):
        return name.reason
    call_id = block.get("id")
    if not isinstance(call_id, str) or not call_id:
        return f"{_where(index, 'id')}: expected a non-empty string, found {found(call_id)}"
    blocks.tool_uses.append(ToolUse(call_id, name, block.get("input", {})))
    return None


def assistant_blocks(content: object) -> AssistantBlocks | Unreadable:
    """Sort an assistant message's content into text, thinking, tool uses and other blocks.

    >>> assistant_blocks([{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "t1", "name": "ls"}])
    AssistantBlocks(texts=['hi'], thinking=[], tool_uses=[ToolUse(id='t1', name='ls', input={})], other=[])
    """
    if isinstance(content, str):
        return AssistantBlocks(texts=[content])
    if not isinstance(content, list):
        return Unreadable(f"message.content: expected a list of blocks, found {found(content)}")
    blocks = AssistantBlocks()
    for index, block in enumerate(content):
        if not isinstance(block, dict):
            return Unreadable(f"{_where(index)}: expected an object, found {found(block)}")
        problem = _assistant_block(blocks, index, block)
        if problem is not None:
            return Unreadable(problem)
    return blocks


def _tool_result(block: dict[str, object], index: int) -> ToolResult | Unreadable:
    call_id = _string(block, index, "tool_use_id")
    if isinstance(call_id, Unreadable):
        return call_id
    text = text_of(block.get("content"), _where(index, "content"))
    if isinstance(text, Unreadable):
        return text
    return ToolResult(call_id, text, block.get("is_error") is True)


def user_blocks(content: object) -> tuple[list[str], list[ToolResult]] | Unreadable:
    """A user message's texts and its tool results.

    >>> user_blocks([{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}])
    ([], [ToolResult(tool_use_id='t1', text='ok', is_error=False)])
    """
    if isinstance(content, str):
        return [content], []
    if not isinstance(content, list):
        return Unreadable(
            f"message.content: expected a string or a list of blocks, found {found(content)}"
        )
    texts: list[str] = []
    results: list[ToolResult] = []
    for index, block in enumerate(content):
        if isinstance(block, dict) and block.get("type") == "tool_result":
            result = _tool_result(block, index)
            if isinstance(result, Unreadable):
                return result
            results.append(result)
            continue
        text = part_text(block)
        if text is None:
            return Unreadable(f"{_where(index)}: expected a content block, found {found(block)}")
        texts.append(text)
    return texts, results
