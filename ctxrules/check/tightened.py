"""What a rule owes the items it changes: invariant 16 (each names its handle) as a step law.

`changed_pairs` yields the items a rule changed, old and new, once; a law about changed
items (invariant 16 here, a pin law beside it) is a loop over it. Without the DAG, a handle
resolves inside the output commit: to an item (its node or attached copy), a summary, or
a fold; an item's own handle is the one that gives back its original.
"""

from __future__ import annotations

from collections.abc import Iterator

from ctxrules.check.differing import differing_pairs
from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules.handles import fold_handle, handle_for, handles_in, item_handle


def changed_pairs(
    before: ContextCommit, after: ContextCommit
) -> Iterator[tuple[int, ContextItem, ContextItem]]:
    """Each position whose item the rule changed, with the old and the new item.

    Only where the same item stands at the same place: a dropped, added or moved item is
    reported once, by `items_kept`. O(items the rule made), by identity first.
    """
    for position, old, new in differing_pairs(before, after):
        if (old.source_node_id, old.attached_from) != (new.source_node_id, new.attached_from):
            continue
        if old != new:
            yield position, old, new


def _owners(commit: ContextCommit) -> dict[str, str]:
    """What each handle of the commit resolves to, in words: an item, a summary or a fold."""
    owners: dict[str, str] = {}
    folded: dict[str, list[str]] = {}
    for item in commit.items:
        where = f" attached from {item.attached_from}" if item.attached_from else ""
        kind = "summary" if item.state is State.SUMMARY else "item"
        owners.setdefault(item_handle(item), f"{kind} {item.source_node_id}{where}")
        if item.merged_into is not None:
            folded.setdefault(item.merged_into, []).append(item.source_node_id)
    for summary, members in folded.items():
        owners.setdefault(fold_handle(members), f"the fold of {summary}")
        owners.setdefault(handle_for(summary), f"summary {summary}")
    return owners


def _named(shown: tuple[str, ...], owners: dict[str, str]) -> str:
    """The handles a text names and what each resolves to, for a report."""
    if not shown:
        return "no handle"
    return "; ".join(f"{h}, which resolves to {owners.get(h, 'nothing')}" for h in shown[:3])


def _shown(item: ContextItem) -> tuple[str, ...]:
    return handles_in(item.rendered) + handles_in(item.arguments)


def _cover_names(cover: ContextItem | None, members: list[str], handle: str) -> bool:
    if cover is None:
        return False
    shown = handles_in(cover.rendered)
    return handle in shown or fold_handle(members) in shown


def handles_named(before: ContextCommit, after: ContextCommit) -> list[Violation]:
    """Invariant 16 for a rule: every item it tightens or folds still names its own handle.

    A shown item whose text the rule changed names its handle in its text or arguments
    (kept text hides nothing); an item the rule folded, or one a rewritten summary covered
    by name before, is named by its summary (its handle, or the fold's). The report names
    the item, its handle and what the handles it does name resolve to.

    >>> from ctxrules.rules.handles import with_note
    >>> old = ContextCommit("s").with_items([ContextItem("t1", "tool", rendered="long output")])
    >>> good = old.replace_items({0: ContextItem("t1", "tool", state="aged", rendered=with_note("[stub]", "t1"))})
    >>> bad = old.replace_items({0: ContextItem("t1", "tool", state="aged", rendered=with_note("[stub]", "t9"))})
    >>> handles_named(old, good), [v.found for v in handles_named(old, bad)]
    ([], ['h:55dkemgp, which resolves to nothing'])
    """
    found: list[Violation] = []
    rewritten: set[str] = set()
    folded: list[tuple[ContextItem, ContextItem]] = []
    owners: dict[str, str] | None = None
    for _, old, new in changed_pairs(before, after):
        if new.state is State.SUMMARY:
            if old.rendered != new.rendered:
                rewritten.add(new.source_node_id)
            continue
        if new.state is State.SUMMARIZED:
            folded.append((old, new))
            continue
        if new.state is State.FULL or (new.rendered, new.arguments) == (
            old.rendered,
            old.arguments,
        ):
            continue
        handle = item_handle(new)
        if handle in _shown(new):
            continue
        owners = _owners(after) if owners is None else owners
        found.append(
            Violation(
                16,
                (new.source_node_id, handle),
                f"the item's handle {handle} named in its text",
                _named(_shown(new), owners),
            )
        )
    found += _covers_named(before, after, rewritten, folded)
    return found


def _covers_named(
    before: ContextCommit,
    after: ContextCommit,
    rewritten: set[str],
    folded: list[tuple[ContextItem, ContextItem]],
) -> list[Violation]:
    """Items folded by the rule, or named by a summary it rewrote, still named by their summary."""
    if not rewritten and not folded:
        return []
    members: dict[str, list[str]] = {}
    for item in after.items:
        if item.merged_into is not None:
            members.setdefault(item.merged_into, []).append(item.source_node_id)
    covers = {i.source_node_id: i for i in after.items if i.state is State.SUMMARY}
    old_covers = {i.source_node_id: i for i in before.items if i.state is State.SUMMARY}
    # A member of a rewritten summary counts only if the summary named it before.
    checked = [new for old, new in folded if old.visible] + [
        item
        for item in after.items
        if item.merged_into in rewritten
        and _cover_names(
            old_covers.get(item.merged_into), members[item.merged_into], item_handle(item)
        )
    ]
    found: list[Violation] = []
    owners: dict[str, str] | None = None
    for item in checked:
        cover_id = item.merged_into or ""
        cover = covers.get(cover_id)
        if _cover_names(cover, members.get(cover_id, []), item_handle(item)):
            continue
        owners = _owners(after) if owners is None else owners
        shown = handles_in(cover.rendered) if cover is not None else ()
        found.append(
            Violation(
                16,
                (item.source_node_id, item_handle(item)),
                f"its handle or the fold's named by summary {cover_id}",
                _named(shown, owners),
            )
        )
    return found
