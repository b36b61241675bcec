"""Invariant 15, prefix stability: between two batch points a request only grows at its end."""

from __future__ import annotations

from collections.abc import Sequence

from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit
from ctxrules.render import Message
from ctxrules.rules.batching import last_batch


def extends(previous: Sequence[Message], current: Sequence[Message]) -> bool:
    """Whether ``current`` starts with every message of ``previous``, unchanged.

    >>> from ctxrules.render import TextBlock
    >>> a, b = Message("user", (TextBlock("a"),)), Message("assistant", (TextBlock("b"),))
    >>> extends((a,), (a, b)), extends((a, b), (b,))
    (True, False)
    """
    return len(current) >= len(previous) and all(
        old == new for old, new in zip(previous, current, strict=False)
    )


def prefix_stable(
    parent: ContextCommit, child: ContextCommit, *, batched: bool = True
) -> list[Violation]:
    """Invariant 15 from parent to child commit: unless the child is a batch point, no item rewritten.

    ``batched`` says the pipeline declares a batching policy; without one there are no
    batch points, so a pipeline that rewrites items already sent breaks the invariant.
    """
    before, _ = last_batch(parent)
    after, _ = last_batch(child)
    if batched and after != before:
        return []
    if len(child.items) < len(parent.items):
        return [
            Violation(
                15,
                (child.id,),
                f"at least the parent's {len(parent.items)} items between batch points",
                f"{len(child.items)} items",
            )
        ]
    changed = [
        old.source_node_id
        for old, new in zip(parent.items, child.items, strict=False)
        if old != new
    ]
    if not changed:
        return []
    return [
        Violation(
            15,
            tuple(changed[:5]),
            "items already sent left unchanged between batch points",
            f"{len(changed)} rewritten",
        )
    ]
