"""Two realistic correct rules, the controls of the third round: `ctxrules check` must pass them."""

from __future__ import annotations

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules import Facts, Rule
from ctxrules.rules.handles import handle_source, with_note
from ctxrules.rules.marks import mark_key
from ctxrules.rules.scan import scan
from ctxrules.rules.tighten import tighten


def age_by_batches(after_turns: int = 3, head_chars: int = 60) -> Rule:
    """Tool results ``after_turns`` turns old become a head and their handle, from the rule's mark.

    Meant for a batched spec: it visits only items past its bookmark, so held-back work is
    found again at the next batch point.
    """
    if after_turns < 1 or head_chars < 0:
        raise ValueError(f"after_turns={after_turns} must be >= 1, head_chars={head_chars} >= 0")
    key = mark_key("age_by_batches", {"after_turns": after_turns, "head_chars": head_chars})

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        changes: dict[int, ContextItem] = {}
        stop = commit.marks.get(key, 0)
        for index, item in scan(commit, stop, facts):
            if facts.head_turn - item.turn < after_turns:
                break
            stop = index + 1
            if item.is_tool and item.state is State.FULL:
                text = with_note(
                    f"[{item.tool_name}] {item.rendered[:head_chars]}…", handle_source(item)
                )
                new = tighten(item, State.AGED, facts, rendered=text, reason="age_by_batches")
                if new is not None and new != item:
                    changes[index] = new
        return commit.replace_items(changes).with_mark(key, stop)

    return rule


def clear_over_share(share: float = 0.05) -> Rule:
    """Clears tool results costing more than ``share`` of the input budget (the budget, or the window).

    A result that is a big part of a small window is cleared at once, with its handle; at
    1M tokens the same result stays.
    """
    if not 0 < share <= 1:
        raise ValueError(f"share={share} must be in (0, 1]")

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        budget = facts.budget if facts.budget is not None else facts.context_window
        limit = int(budget * share)
        changes: dict[int, ContextItem] = {}
        for index, item in scan(commit, 0, facts):
            if item.is_tool and item.state is not State.CLEARED and item.tokens > limit:
                text = with_note(f"[{item.tool_name} output cleared]", handle_source(item))
                new = tighten(item, State.CLEARED, facts, rendered=text, reason="over_share")
                if new is not None and new != item:
                    changes[index] = new
        return commit.replace_items(changes)

    return rule


#: A batched spec of both controls, as a user would write it.
CONTROLS_SPEC = """
[batching]
every_turns = 8
min_history_tokens = 4000

[[rules]]
name = "age-by-batches"
use = "correct_rules:age_by_batches"
[rules.params]
after_turns = 3

[[rules]]
name = "clear-over-share"
use = "correct_rules:clear_over_share"
[rules.params]
share = 0.05
"""
