"""Idle clearing: aged results left alone long enough become one fixed placeholder."""

from __future__ import annotations

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules.facts import Facts
from ctxrules.rules.handles import handle_source, with_note
from ctxrules.rules.marks import mark_key
from ctxrules.rules.pipeline import Rule
from ctxrules.rules.protected import is_protected, protected_keys
from ctxrules.rules.scan import scan
from ctxrules.rules.tighten import tighten

#: Byte-identical every time, so a provider's cached prefix stays valid across turns; each
#: cleared item adds its own recall handle, which never changes for that item either.
IDLE_PLACEHOLDER = "[Old tool result cleared]"


def clear_idle(
    idle_seconds: float,
    placeholder: str,
    protected_tools: tuple[str, ...],
    *,
    handles: bool = True,
) -> Rule:
    """Tool results ``aged`` for at least ``idle_seconds`` (by ``Facts.now``) become ``cleared``.

    A cleared result shows ``placeholder`` and its recall handle (unless ``handles`` is false).

    Items are aged in position order, so the scan stops at the first aged result that is
    not idle yet. A full result is passed over but keeps the mark from moving past it, so
    without an aging rule in the pipeline each turn rescans from the first full result.
    """
    key = mark_key(
        "clear_idle",
        {
            "idle_seconds": idle_seconds,
            "placeholder": placeholder,
            "protected_tools": protected_tools,
            "handles": handles,
        },
    )
    protected = protected_keys(protected_tools)

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        changes: dict[int, ContextItem] = {}
        start = commit.marks.get(key, 0)
        stop = None  # the first position that may still need this rule
        # A summarized item is settled here (tighter than cleared): its spans go unread.
        for index, item in scan(commit, start, facts, past=commit.hidden or ()):
            settled = (
                not item.is_tool
                or item.locked
                or is_protected(item.tool_name, protected)
                or item.state.tightness >= State.CLEARED.tightness
            )
            if settled:
                continue
            if item.state is State.AGED and facts.now - item.changed_at >= idle_seconds:
                text = with_note(placeholder, handle_source(item), on=handles)
                cleared = tighten(item, State.CLEARED, facts, rendered=text, reason="idle")
                if cleared is not None:
                    changes[index] = cleared
                continue
            if stop is None:
                stop = index
            if item.state is State.AGED:
                # Aged later than this one, so not idle either: nothing further to do now.
                break
        return commit.replace_items(changes).with_mark(
            key, len(commit.items) if stop is None else stop
        )

    return rule
