"""Deliberately broken rules, one per way a rule can break the contract (for `ctxrules check`)."""

from __future__ import annotations

import random
import time

import attrs

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.rules import Facts, Rule


def _first(commit: ContextCommit, wanted: object) -> int | None:
    return next((i for i, item in enumerate(commit.items) if wanted(item)), None)  # type: ignore[operator]


def loosen() -> Rule:
    """Moves an aged or cleared item back to full (invariant 3)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        index = _first(commit, lambda i: i.state in (State.AGED, State.CLEARED) and not i.locked)
        if index is None:
            return commit
        return commit.replace_items(
            {index: counted(attrs.evolve(commit.items[index], state=State.FULL), facts.tokenizer)}
        )

    return rule


def touch_locked() -> Rule:
    """Clears a locked item (invariant 4)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        index = _first(commit, lambda i: i.locked and i.state is State.FULL)
        if index is None:
            return commit
        changed = attrs.evolve(commit.items[index], state=State.CLEARED, rendered="")
        return commit.replace_items({index: counted(changed, facts.tokenizer)})

    return rule


def read_clock() -> Rule:
    """Ages items by the wall clock instead of Facts.now (invariant 8)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        if not commit.items:
            return commit
        stamp = f"[seen at {time.time():.0f}]"
        item = commit.items[0]
        if item.state is State.FULL or item.locked:
            return commit
        return commit.replace_items(
            {0: counted(attrs.evolve(item, rendered=stamp[: len(item.rendered)]), facts.tokenizer)}
        )

    return rule


def use_randomness() -> Rule:
    """Picks an item to clear at random (invariant 8)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        candidates = [
            i for i, item in enumerate(commit.items) if item.state is State.FULL and not item.locked
        ]
        if len(candidates) < 2:
            return commit
        index = random.choice(candidates)  # noqa: S311 - the point of this broken rule
        return commit.replace_items(
            {
                index: counted(
                    attrs.evolve(commit.items[index], state=State.CLEARED, rendered=""),
                    facts.tokenizer,
                )
            }
        )

    return rule


def grow_tokens() -> Rule:
    """Ages an item but makes its text longer (invariant 3)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        index = _first(commit, lambda i: i.state is State.FULL and not i.locked)
        if index is None:
            return commit
        item = commit.items[index]
        grown = attrs.evolve(
            item,
            state=State.AGED,
            rendered=item.rendered + " (aged, and here is a long note about it)",
        )
        return commit.replace_items({index: counted(grown, facts.tokenizer)})

    return rule


def drop_item() -> Rule:
    """Drops the last item (invariant 13)."""

    def rule(commit: ContextCommit, _facts: Facts) -> ContextCommit:
        return commit.with_items(commit.items[:-1]) if commit.items else commit

    return rule


def duplicate_item() -> Rule:
    """Duplicates the first item (invariant 13)."""

    def rule(commit: ContextCommit, _facts: Facts) -> ContextCommit:
        return commit.with_items([commit.items[0], *commit.items]) if commit.items else commit

    return rule


def orphan_pair() -> Rule:
    """Gives a tool result another call's id, so a result pairs with the wrong call (invariant 11)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        tools = [
            i
            for i, item in enumerate(commit.items)
            if item.is_tool
            and item.tool_call_id
            and item.tool_name
            and item.visible
            and not item.locked
        ]
        if len(tools) < 2:
            return commit
        first, second = commit.items[tools[0]], commit.items[tools[1]]
        return commit.replace_items(
            {
                tools[1]: counted(
                    attrs.evolve(second, tool_call_id=first.tool_call_id), facts.tokenizer
                )
            }
        )

    return rule


def stack_summary() -> Rule:
    """Turns a full assistant item into a second summary (invariant 12)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        summaries = [item for item in commit.items if item.state is State.SUMMARY]
        index = _first(
            commit, lambda i: i.state is State.FULL and i.role.value == "assistant" and not i.locked
        )
        if not summaries or index is None:
            return commit
        return commit.replace_items(
            {
                index: counted(
                    attrs.evolve(commit.items[index], state=State.SUMMARY), facts.tokenizer
                )
            }
        )

    return rule


def miscount() -> Rule:
    """Shortens an item's text but keeps its old token count (invariant 10)."""

    def rule(commit: ContextCommit, _facts: Facts) -> ContextCommit:
        index = _first(
            commit, lambda i: i.state is State.FULL and not i.locked and len(i.rendered) > 20
        )
        if index is None:
            return commit
        item = commit.items[index]
        return commit.replace_items(
            {index: attrs.evolve(item, state=State.AGED, rendered=item.rendered[:5])}
        )

    return rule


def expand_twice() -> Rule:
    """Appends a second copy of an attached block (invariant 6)."""

    def rule(commit: ContextCommit, _facts: Facts) -> ContextCommit:
        block = [item for item in commit.items if item.attached_from]
        if not block:
            return commit
        return commit.append_items(block)

    return rule


def change_full_text() -> Rule:
    """Rewrites a full item's text without tightening it (invariant 3)."""

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        index = _first(commit, lambda i: i.state is State.FULL and not i.locked and i.rendered)
        if index is None:
            return commit
        item = commit.items[index]
        return commit.replace_items(
            {index: counted(attrs.evolve(item, rendered=item.rendered[:-1]), facts.tokenizer)}
        )

    return rule


def mutate_input() -> Rule:
    """Writes into the input commit's item behind the frozen class's back (invariant 8)."""

    def rule(commit: ContextCommit, _facts: Facts) -> ContextCommit:
        target: ContextItem | None = next(
            (i for i in commit.items if not i.locked and i.state is State.FULL), None
        )
        if target is not None:
            object.__setattr__(target, "reason", "mutated")
        return commit

    return rule


#: Each broken rule with the invariant `ctxrules check` must report for it.
BROKEN = {
    "loosen": 3,
    "touch_locked": 4,
    "read_clock": 8,
    "use_randomness": 8,
    "grow_tokens": 3,
    "drop_item": 13,
    "duplicate_item": 13,
    "orphan_pair": 11,
    "stack_summary": 12,
    "miscount": 10,
    "expand_twice": 6,
    "change_full_text": 3,
    "mutate_input": 8,
}
