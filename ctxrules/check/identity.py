"""What a rule may not change about an item or a commit: identity, pairing, coverage, content id."""

from __future__ import annotations

import attrs

from ctxrules.check.compaction import covered, is_summary
from ctxrules.check.differing import differing_pairs
from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.commit.commit import items_digest

#: Fields that say which node an item is and where it belongs; a rule only tightens text.
_IDENTITY = ("role", "turn", "created_at", "is_anchor")


def _fields(item: ContextItem, names: tuple[str, ...]) -> tuple[object, ...]:
    return tuple(getattr(item, name) for name in names)


def _same_keys(before: ContextCommit, after: ContextCommit) -> bool:
    # Only item by item: a dropped or moved item is reported once, by `items_kept`.
    # An item left as the same object keeps its keys: only the others are read.
    return len(before.items) == len(after.items) and all(
        (a.source_node_id, a.attached_from) == (b.source_node_id, b.attached_from)
        for _, a, b in differing_pairs(before, after)
    )


def pairing_kept(before: ContextCommit, after: ContextCommit) -> list[Violation]:
    """Invariant 11 for a rule: each item keeps its tool call id and tool name.

    A changed id makes a result pair with another call (or with none) in the request.
    """
    if not _same_keys(before, after):
        return []
    return [
        Violation(
            11,
            (old.source_node_id,),
            f"tool call id {old.tool_call_id!r} of tool {old.tool_name!r} kept",
            f"{new.tool_call_id!r} of tool {new.tool_name!r}",
        )
        for _, old, new in differing_pairs(before, after)
        if (old.tool_call_id, old.tool_name) != (new.tool_call_id, new.tool_name)
    ]


def identity_kept(before: ContextCommit, after: ContextCommit) -> list[Violation]:
    """Invariants 13 and 4 for a rule: role, turn and times stay; a locked item stays locked."""
    if not _same_keys(before, after):
        return []
    found: list[Violation] = []
    # An item left as the same object keeps every field: only the others can break these.
    for _, old, new in differing_pairs(before, after):
        if _fields(old, _IDENTITY) != _fields(new, _IDENTITY):
            changed = [n for n in _IDENTITY if getattr(old, n) != getattr(new, n)]
            found.append(
                Violation(
                    13, (old.source_node_id,), "the item's node unchanged", f"{changed} changed"
                )
            )
        if old.locked and not new.locked:
            found.append(Violation(4, (old.source_node_id,), "the item still locked", "unlocked"))
    return found


def summaries_cover(commit: ContextCommit) -> list[Violation]:
    """Invariant 13 inside a commit: every folded item leads by ``merged_into`` to the active summary."""
    summaries = {i.source_node_id: i for i in commit.items if is_summary(i)}
    return [
        Violation(
            13,
            (item.source_node_id,),
            "a folded item covered by the active summary",
            f"merged_into={item.merged_into!r}",
        )
        for item in commit.items
        if not item.visible and not is_summary(item) and not covered(item, summaries)
    ]


def folded_with_summary(before: ContextCommit, after: ContextCommit) -> list[Violation]:
    """Invariant 13 for a rule: what it folds goes into a summary written in the same step.

    An item shown before and summarized after must name, by ``merged_into``, a summary that
    is new or changed: folding into a summary that already stood, as it stood, loses the
    item's content from what the model reads.
    """
    shown = {(i.source_node_id, i.attached_from) for i in before.items if i.visible}
    folded = [
        i for i in after.items if not i.visible and (i.source_node_id, i.attached_from) in shown
    ]
    if not folded:
        return []
    old = {i.source_node_id: i for i in before.items if is_summary(i)}
    written = {
        i.source_node_id for i in after.items if is_summary(i) and old.get(i.source_node_id) != i
    }
    return [
        Violation(
            13,
            (item.source_node_id,),
            "a folded item merged into a summary written in the same step",
            f"merged_into={item.merged_into!r}, a summary left as it was",
        )
        for item in folded
        if item.merged_into not in written
    ]


def content_id_matches(
    commit: ContextCommit, before: ContextCommit | None = None
) -> list[Violation]:
    """Invariant 2: the commit's id is the one its content gives when recomputed from scratch.

    Items are hashed afresh too (an item's digest is kept once computed), except those that
    are the very objects ``before`` holds at the same place: O(items a rule made).
    """
    kept = before.items if before is not None else ()
    digest = items_digest(
        commit.items, rehash=lambda i, item: not (i < len(kept) and kept[i] is item)
    )
    fresh = attrs.evolve(commit, digest=digest)
    if fresh.id == commit.id:
        return []
    return [
        Violation(
            2,
            (commit.id,),
            f"the id recomputed from the content ({fresh.id[:14]}…)",
            "a stale id (the items changed behind the commit's methods)",
        )
    ]
