"""What changed from one request's commit to the next: added, tightened and folded items, by rule.

The inspector's diff view and the OpenTelemetry spans read the same record, so the page and
the trace never disagree about which rule hid which item or where the cached prefix ended.
"""

from __future__ import annotations

import enum

import attrs

from ctxrules.commit.commit import ContextCommit
from ctxrules.commit.item import ContextItem
from ctxrules.commit.state import State


class ChangeKind(enum.StrEnum):
    """How an item differs from its copy in the previous commit."""

    ADDED = "added"
    TIGHTENED = "tightened"
    FOLDED = "folded"
    REWRITTEN = "rewritten"


@attrs.frozen
class ItemChange:
    """One item of the newer commit that is new or differs from the older one."""

    position: int
    kind: ChangeKind
    item: ContextItem
    before: ContextItem | None = None

    @property
    def tokens_before(self) -> int:
        """The item's tokens in the older commit (0 for a new item)."""
        return self.before.tokens if self.before is not None else 0


@attrs.frozen
class RuleTally:
    """What one rule (named by the reason it writes) did between two commits."""

    items: int = 0
    tokens_before: int = 0
    tokens_after: int = 0


@attrs.frozen
class CommitDiff:
    """The changes from ``before`` to ``after`` and how many leading items they share.

    ``prefix_end`` is the position of the first item that differs (the end of what a
    provider's cached prefix can still cover); ``prefix_tokens`` the tokens before it.
    """

    changes: tuple[ItemChange, ...]
    prefix_end: int
    prefix_tokens: int
    removed: int = 0

    @property
    def extends(self) -> bool:
        """Whether the newer commit only adds items at the end of the older one."""
        return all(c.kind is ChangeKind.ADDED for c in self.changes) and not self.removed

    def by_rule(self) -> dict[str, RuleTally]:
        """Tightened and folded items by the reason their rule wrote, with their tokens."""
        tallies: dict[str, RuleTally] = {}
        for change in self.changes:
            if change.kind not in (ChangeKind.TIGHTENED, ChangeKind.FOLDED):
                continue
            old = tallies.get(change.item.reason, RuleTally())
            tallies[change.item.reason] = RuleTally(
                old.items + 1,
                old.tokens_before + change.tokens_before,
                old.tokens_after + change.item.tokens,
            )
        return tallies


def sends_same(old: ContextItem, new: ContextItem) -> bool:
    """Whether two items of one node send the same text: equal, or different only where no request looks.

    A pin, a lock, a reason or a time changes the item but not its messages, so the
    provider's cached prefix holds across it.

    >>> item = ContextItem("n1", "user", rendered="never push to main", tokens=5)
    >>> sends_same(item, item.pin()), sends_same(item, ContextItem("n1", "user", rendered="push", tokens=1))
    (True, False)
    """
    return old is new or (
        old.rendered == new.rendered
        and old.state is new.state
        and old.source_node_id == new.source_node_id
        and old.attached_from == new.attached_from
        and old.role is new.role
        and old.arguments == new.arguments
        and old.tool_name == new.tool_name
        and old.tool_call_id == new.tool_call_id
        and old.tokens == new.tokens
    )


def _key(item: ContextItem) -> tuple[str | None, str]:
    return item.attached_from, item.source_node_id


def _kind(old: ContextItem, new: ContextItem) -> ChangeKind:
    if new.state is State.SUMMARIZED and old.state is not State.SUMMARIZED:
        return ChangeKind.FOLDED
    if new.state is not old.state:
        return ChangeKind.TIGHTENED
    return ChangeKind.REWRITTEN


def diff_commits(before: ContextCommit | None, after: ContextCommit) -> CommitDiff:
    """The items of ``after`` that are new or send other text than in ``before``; O(items of both).

    >>> from ctxrules.commit import ContextItem
    >>> a = ContextCommit("s").append_items([ContextItem("n1", "tool", tokens=90)])
    >>> b = a.replace_items({0: ContextItem("n1", "tool", "aged", tokens=9, reason="tail_window")})
    >>> b = b.append_items([ContextItem("n2", "user", tokens=5)])
    >>> d = diff_commits(a, b)
    >>> [(c.kind.value, c.item.source_node_id) for c in d.changes], d.prefix_end
    ([('tightened', 'n1'), ('added', 'n2')], 0)
    >>> d.by_rule()["tail_window"]
    RuleTally(items=1, tokens_before=90, tokens_after=9)
    """
    old_items = before.items if before is not None else ()
    prefix_end, prefix_tokens = 0, 0
    for old, new in zip(old_items, after.items, strict=False):
        if not sends_same(old, new):
            break
        prefix_end += 1
        prefix_tokens += new.tokens
    # The shared prefix holds the same items on both sides (an item's key is unique within a
    # commit), so only what follows it is compared: O(new items) while requests extend.
    earlier = {_key(item): item for item in old_items[prefix_end:]}
    changes: list[ItemChange] = []
    kept = 0
    for position in range(prefix_end, len(after.items)):
        item = after.items[position]
        copy = earlier.get(_key(item))
        if copy is None:
            changes.append(ItemChange(position, ChangeKind.ADDED, item))
            continue
        kept += 1
        if sends_same(copy, item):
            continue
        changes.append(ItemChange(position, _kind(copy, item), item, copy))
    return CommitDiff(tuple(changes), prefix_end, prefix_tokens, len(earlier) - kept)
