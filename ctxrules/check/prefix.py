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


def replaced_reported(before: ContextCommit, after: ContextCommit) -> list[Violation]:
    """Invariant 15 for a rule: the positions it reports as replaced hold every change it made.

    Batching restores only the reported positions between batch points (`hold_back`), so
    a change left out, or an earlier rule's report dropped, lands in a request already sent.
    Nothing to check when the output keeps no report (``replaced`` None: every item is compared).

    >>> from ctxrules.commit import ContextItem
    >>> base = ContextCommit("s").with_items([ContextItem("a", "user")]).begin_generation()
    >>> changed = base.replace_items({0: ContextItem("a", "user", reason="x")})
    >>> replaced_reported(base, changed), [v.expected for v in replaced_reported(base, changed.begin_generation())]
    ([], ['every changed position among those reported replaced'])
    """
    if after.replaced is None:
        return []
    reported = set(after.replaced)
    dropped = sorted(set(before.replaced or ()) - reported)
    unreported = [
        position
        for position, (old, new) in enumerate(zip(before.items, after.items, strict=False))
        if old is not new and position not in reported and old != new
    ]
    found: list[Violation] = []
    if unreported:
        found.append(
            Violation(
                15,
                tuple(after.items[p].source_node_id for p in unreported[:5]),
                "every changed position among those reported replaced",
                f"{len(unreported)} changed and not reported (positions {unreported[:5]})",
            )
        )
    if dropped:
        found.append(
            Violation(
                15,
                (),
                "the positions replaced before the rule still reported",
                f"positions {dropped[:5]} dropped",
            )
        )
    return found
