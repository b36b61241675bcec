"""Example Python rules for specs that ``use = "example_rules:<factory>"`` (tests and docs)."""

from __future__ import annotations

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules import Facts, Rule
from ctxrules.rules.scan import scan
from ctxrules.rules.tighten import tighten

NOT_A_FACTORY = 42


def clear_tool(tool: str, placeholder: str = "[cleared]") -> Rule:
    """Clear every result of one tool; checks its parameters once, then returns the rule."""
    if not tool:
        raise ValueError("tool must be a non-empty tool name")

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        changes: dict[int, ContextItem] = {}
        for index, item in scan(commit, 0, facts):
            if item.tool_name == tool:
                cleared = tighten(
                    item, State.CLEARED, facts, rendered=placeholder, reason="clear_tool"
                )
                if cleared is not None and cleared != item:
                    changes[index] = cleared
        return commit.replace_items(changes)

    return rule


def not_a_rule() -> int:
    """A factory that returns something that is not callable."""
    return 7


def broken() -> Rule:
    """A factory that always fails."""
    raise RuntimeError("this factory is broken")
