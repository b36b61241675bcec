"""Tool-result aging: stub results outside the tail window, and cap any huge result."""

from __future__ import annotations

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules.facts import Facts
from ctxrules.rules.handles import handle_for, handle_source, with_note
from ctxrules.rules.marks import mark_key
from ctxrules.rules.pipeline import Rule
from ctxrules.rules.protected import PROTECTED_TOOLS, is_protected, protected_keys
from ctxrules.rules.scan import scan
from ctxrules.rules.text import head, head_and_tail, one_line
from ctxrules.rules.tighten import tighten

__all__ = ["CAPPED", "PROTECTED_TOOLS", "age_tool_results", "cap_tool_result", "tool_stub"]
CAPPED = "capped"


def tool_stub(item: ContextItem, head_chars: int, tail_chars: int, *, handles: bool = True) -> str:
    r"""The one-line stub of an aged result: ``[tool <name>] output: <head>… <tail> [recall <handle>]``.

    >>> tool_stub(ContextItem("n", "tool", rendered="line one\nline two\nend", tool_name="cat"), 8, 3)
    '[tool cat] output: line one… end [recall h:dmlldx2t]'
    """
    text = one_line(item.rendered)
    body = (
        text
        if len(text) <= head_chars + tail_chars
        else f"{text[:head_chars]}… {text[len(text) - tail_chars :]}"
    )
    return with_note(
        f"[tool {item.tool_name or 'unknown'}] output: {body}", handle_source(item), on=handles
    )


def age_tool_results(
    tail_turns: int,
    max_args_chars: int,
    stub_head_chars: int,
    stub_tail_chars: int,
    protected_tools: tuple[str, ...],
    *,
    handles: bool = True,
) -> Rule:
    """Tool results older than the last ``tail_turns`` assistant turns become one-line stubs.

    The call keeps its name and its arguments cut to ``max_args_chars``; the stub names the
    result's recall handle unless ``handles`` is false. Items are visited from the rule's
    mark up to the tail window only.
    """
    key = mark_key(
        "age_tool_results",
        {
            "tail_turns": tail_turns,
            "max_args_chars": max_args_chars,
            "stub_head_chars": stub_head_chars,
            "stub_tail_chars": stub_tail_chars,
            "protected_tools": protected_tools,
            "handles": handles,
        },
    )
    protected = protected_keys(protected_tools)

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        cutoff = facts.head_turn - tail_turns
        changes: dict[int, ContextItem] = {}
        stop = commit.marks.get(key, 0)
        for index, item in scan(commit, stop, facts):
            if item.turn >= cutoff:
                break
            stop = index + 1
            agable = item.state is State.FULL or (
                item.state is State.AGED and item.reason == CAPPED
            )
            if item.is_tool and agable and not is_protected(item.tool_name, protected):
                aged = tighten(
                    item,
                    State.AGED,
                    facts,
                    rendered=tool_stub(item, stub_head_chars, stub_tail_chars, handles=handles),
                    arguments=head(item.arguments, max_args_chars),
                    reason="tail_window",
                )
                if aged is not None and aged != item:
                    changes[index] = aged
        return commit.replace_items(changes).with_mark(key, stop)

    return rule


def cap_marker(cut: int, total: int, source_id: str, *, handles: bool = True) -> str:
    r"""What stands for the cut middle of a capped text: its size and recall handle.

    >>> cap_marker(6000, 10000, "n")
    '\n…[6000 of 10000 characters cut; recall h:dmlldx2t]…\n'
    >>> cap_marker(6000, 10000, "n", handles=False)
    '\n…[6000 characters cut]…\n'
    """
    if not handles:
        return f"\n…[{cut} characters cut]…\n"
    return f"\n…[{cut} of {total} characters cut; recall {handle_for(source_id)}]…\n"


def cap_tool_result(
    max_chars: int, tail_share: float, max_args_chars: int = 0, *, handles: bool = True
) -> Rule:
    """Any tool result over ``max_chars`` keeps its head and tail (inside the tail window too).

    ``max_args_chars`` (0: off) does the same to a call's arguments, such as the content
    of a file the agent wrote, which would otherwise stay whole until the call ages. The
    capped item is ``aged`` with reason ``capped``; the marker between head and tail gives
    the full size and the recall handle (unless ``handles`` is false). Each item is
    examined once, when new, so capping never rewrites a request already sent.
    """
    params: dict[str, object] = {"max_chars": max_chars, "tail_share": tail_share}
    if max_args_chars:
        params["max_args_chars"] = max_args_chars
    params["handles"] = handles
    key = mark_key("cap_tool_result", params)

    def cut(text: str, limit: int, source_id: str) -> str:
        marker = cap_marker(len(text) - limit, len(text), source_id, handles=handles)
        room = max(limit - len(marker), 0)
        tail_chars = int(room * tail_share)
        return head_and_tail(text, room - tail_chars, tail_chars, marker)

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        changes: dict[int, ContextItem] = {}
        for index, item in scan(commit, commit.marks.get(key, 0), facts):
            if not item.is_tool or item.state is not State.FULL:
                continue
            long_result = len(item.rendered) > max_chars
            long_args = bool(max_args_chars) and len(item.arguments) > max_args_chars
            if long_result or long_args:
                capped = tighten(
                    item,
                    State.AGED,
                    facts,
                    rendered=cut(item.rendered, max_chars, handle_source(item))
                    if long_result
                    else item.rendered,
                    arguments=cut(item.arguments, max_args_chars, handle_source(item))
                    if long_args
                    else item.arguments,
                    reason=CAPPED,
                )
                if capped is not None and capped != item:
                    changes[index] = capped
        return commit.replace_items(changes).with_mark(key, len(commit.items))

    return rule
