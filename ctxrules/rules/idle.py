"""Idle clearing: aged results left alone long enough become one fixed placeholder."""

from __future__ import annotations

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules.facts import Facts
from ctxrules.rules.marks import mark_key
from ctxrules.rules.pipeline import Rule
from ctxrules.rules.scan import scan
from ctxrules.rules.tighten import tighten

#: Byte-identical every time, so a provider's cached prefix stays valid across turns.
IDLE_PLACEHOLDER = "[Old tool result cleared]"


def clear_idle(idle_seconds: float, placeholder: str, protected_tools: tuple[str, ...]) -> Rule:
    """Tool results ``aged`` for at least ``idle_seconds`` (by ``Facts.now``) become ``cleared``.

    Items were aged in position order, so the scan stops at the first result not yet idle
    (or not yet aged); everything before the rule's mark is settled.
    """
    key = mark_key(
        "clear_idle",
        {
            "idle_seconds": idle_seconds,
            "placeholder": placeholder,
            "protected_tools": protected_tools,
        },
    )
    protected = frozenset(protected_tools)

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        changes: dict[int, ContextItem] = {}
        stop = commit.marks.get(key, 0)
        for index, item in scan(commit, stop, facts):
            settled = (
                not item.is_tool
                or item.locked
                or item.tool_name in protected
                or item.state.tightness >= State.CLEARED.tightness
            )
            if not settled:
                if item.state is not State.AGED or facts.now - item.changed_at < idle_seconds:
                    break
                cleared = tighten(item, State.CLEARED, facts, rendered=placeholder, reason="idle")
                if cleared is not None:
                    changes[index] = cleared
            stop = index + 1
        return commit.replace_items(changes).with_mark(key, stop)

    return rule
