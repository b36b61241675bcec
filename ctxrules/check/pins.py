"""Invariant 17: a pinned item is never tightened, folded or snipped; every request holds it whole."""

from __future__ import annotations

from collections.abc import Sequence

from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import Message
from ctxrules.render.render import item_messages


def pins_kept(before: ContextCommit, after: ContextCommit) -> list[Violation]:
    """Every item pinned in ``before`` is in ``after`` unchanged (by a rule, a compaction or a pin).

    Items are matched by node and attach source, not by position, so a compaction that
    moves items is checked too. Unpinning is the one way a pin ends (`Context.unpin`).
    """
    after_items = {(i.source_node_id, i.attached_from): i for i in after.items}
    found = []
    for old in before.items:
        if not old.pinned:
            continue
        new = after_items.get((old.source_node_id, old.attached_from))
        if new is None:
            found.append(_broken(old, "dropped"))
        elif new.pinned and (new.state, new.rendered, new.arguments) != (
            old.state,
            old.rendered,
            old.arguments,
        ):
            found.append(_broken(old, f"state {new.state.value!r}, reason {new.reason!r}"))
        elif not new.pinned and new.state is not State.FULL:
            found.append(_broken(old, f"unpinned and {new.state.value!r} in the same step"))
    return found


def pins_sent(commit: ContextCommit, messages: Sequence[Message]) -> list[Violation]:
    """Every pinned item of ``commit`` is whole in the request ``messages`` (after any snip)."""
    sent = set(messages)
    return [
        _broken(item, "missing from the request", "whole in every request")
        for item in commit.items
        if item.pinned and not all(m in sent for m in item_messages(item))
    ]


def _broken(
    item: ContextItem, found: str, expected: str = "the pinned item unchanged"
) -> Violation:
    return Violation(17, (item.source_node_id,), expected, found)
