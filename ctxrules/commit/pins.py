"""Pinning and unpinning items of a commit by node id (invariant 17)."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ctxrules.commit.commit import ContextCommit
from ctxrules.commit.state import State


@attrs.frozen
class Pinned:
    """The commit with the pins applied, and the node ids it could not pin, with why."""

    commit: ContextCommit
    refused: tuple[tuple[str, str], ...] = ()


def apply_pins(commit: ContextCommit, pins: Mapping[str, bool]) -> Pinned:
    """Pin (True) or unpin (False) the items of these nodes; the commit's parent is ``commit``.

    Only a whole (``full``) item can be pinned: pinning never loosens an item (invariant
    3). A node with no item yet is refused too; the caller may try again later.

    >>> from ctxrules.commit import ContextItem
    >>> c = ContextCommit("s").append_items([ContextItem("a", "user", rendered="never push")])
    >>> out = apply_pins(c, {"a": True, "b": True})
    >>> out.commit.items[0].pinned, out.refused, out.commit.parent_ids == (c.id,)
    (True, (('b', 'no item for this node yet'),), True)
    """
    wanted = dict(pins)
    changes = {}
    refused: list[tuple[str, str]] = []
    for position, item in enumerate(commit.items):
        pin = wanted.pop(item.source_node_id, None)
        if pin is None:
            continue
        if pin and not item.pinned and item.state is not State.FULL:
            why = f"the item is already {item.state.value}; only a whole item can be pinned"
            refused.append((item.source_node_id, why))
            continue
        changed = item.pin() if pin else item.unpin()
        if changed is not item:
            changes[position] = changed
    refused.extend((node, "no item for this node yet") for node in wanted)
    if not changes:
        return Pinned(commit, tuple(refused))
    pinned = commit.replace_items(changes)
    return Pinned(attrs.evolve(pinned, parent_ids=(commit.id,)), tuple(refused))
