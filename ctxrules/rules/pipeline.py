"""`Rule` and `Pipeline`: pure transformations of a commit, applied as a left fold."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import attrs

from ctxrules.canonical import content_hash
from ctxrules.commit.commit import ContextCommit
from ctxrules.commit.item import ContextItem
from ctxrules.errors import USER_CODE_ERRORS, ReadOnDemandFailed
from ctxrules.rules.batching import (
    Batching,
    BatchReason,
    declined,
    from_new_items,
    hold_back,
    mark_batch,
)
from ctxrules.rules.cap import CapToolResult
from ctxrules.rules.facts import Facts

Rule: TypeAlias = Callable[[ContextCommit, Facts], ContextCommit]
"""A pure function from commit to commit.

It keeps every item's identity and order, may only tighten unlocked items, never reads
the clock or any global, and never writes to the DAG. Everything it may know besides
the commit arrives in `Facts`.
"""


PinTest: TypeAlias = Callable[[ContextItem, int, Facts], bool]
"""Whether a new item, at this position of its commit, is pinned on arrival (a spec's `[[pins]]`)."""


@attrs.frozen
class NamedRule:
    """A rule with the name a spec gives it."""

    name: str
    rule: Rule


class RuleRaised(Exception):
    """A rule of the pipeline raised: which one, and what (``error``, also the ``__cause__``).

    A spec's own code failing is not the library's fault: the command line says so and
    names the rule, where a bare exception read as a bug in ctxrules.
    """

    def __init__(self, rule: str, error: BaseException) -> None:
        text = str(error).replace("\n", " ")[:300]
        super().__init__(
            f"rule {rule!r} raised {type(error).__name__}" + (f": {text}" if text else "")
        )
        self.rule = rule
        self.error = error


@attrs.frozen
class Pipeline:
    """An ordered tuple of named rules plus ``version``, the hash of the normalised spec.

    ``batching``, when set, decides at which turns tightening of already-sent items lands
    (`Batching`); without it every change lands at once. ``pins`` pin a new item that any of
    them accepts, before any rule sees it (invariant 17).
    """

    rules: tuple[NamedRule, ...] = ()
    version: str = attrs.field(default=content_hash({"rules": []}))
    batching: Batching | None = None
    pins: tuple[PinTest, ...] = ()

    def run(self, commit: ContextCommit, facts: Facts) -> ContextCommit:
        """Apply every rule in order (a left fold).

        >>> Pipeline().run(ContextCommit("s"), Facts()) == ContextCommit("s")
        True
        """
        for named in self.rules:
            try:
                commit = named.rule(commit, facts)
            except ReadOnDemandFailed:
                raise  # the store's fault, met inside the rule: not the rule's
            except USER_CODE_ERRORS as error:
                raise RuleRaised(named.name, error) from error
        return commit

    def on_arrival(self, item: ContextItem, facts: Facts, position: int = 0) -> ContextItem:
        """A new item as the first rule will leave it, when that rule is a cap; else the item.

        A pin of the spec that accepts the item (at ``position`` in its commit) pins it
        first, and a cap leaves a pinned item whole.

        Commit generation calls it before it counts the item, and a cap reads only the
        head and tail it keeps: a huge tool result then costs what is sent, not its size.
        A cap that is not first keeps running as a rule, after the ones before it.

        >>> from ctxrules.rules.cap import cap_tool_result
        >>> big = ContextItem("n", "tool", rendered="x" * 5000, tool_name="cat")
        >>> capped = Pipeline((NamedRule("cap", cap_tool_result(1000, 0.3)),)).on_arrival(big, Facts())
        >>> (capped.state.value, len(capped.rendered)), Pipeline().on_arrival(big, Facts()) is big
        (('aged', 1000), True)
        """
        if any(test(item, position, facts) for test in self.pins):
            item = item.pin()
        first = self.rules[0].rule if self.rules else None
        return first.on_arrival(item, facts) if isinstance(first, CapToolResult) else item

    @property
    def result_chars(self) -> int | None:
        """The longest tool result every cap in the pipeline keeps whole, if it has a cap.

        A recall answer is paged to fit (`ctxrules.engine.recall.SessionRecall`), so the cap
        never cuts what the model asked to see.

        >>> from ctxrules.rules.cap import cap_tool_result
        >>> Pipeline((NamedRule("cap", cap_tool_result(4000, 0.3)),)).result_chars, Pipeline().result_chars
        (4000, None)
        """
        caps = [n.rule.max_chars for n in self.rules if isinstance(n.rule, CapToolResult)]
        return min(caps) if caps else None

    def result_chars_at(self, facts: Facts) -> int | None:
        """`result_chars` at the window in ``facts``: a cap that scales with the window keeps less.

        >>> from ctxrules.rules.cap import cap_tool_result
        >>> Pipeline((NamedRule("cap", cap_tool_result(4000, 0.3, scale_below=16_000)),)).result_chars_at(
        ...     Facts(context_window=16_000))
        2000
        """
        caps = [n.rule.at(facts).max_chars for n in self.rules if isinstance(n.rule, CapToolResult)]
        return min(caps) if caps else None

    def step(
        self, parent: ContextCommit | None, grown: ContextCommit, facts: Facts
    ) -> ContextCommit:
        """Run the rules on ``grown`` (``parent`` plus new items) under the batching policy.

        At a batch point every change lands and the commit records it; otherwise only the
        new items may change, so the request extends the previous one (invariant 15).
        """
        if self.batching is None:
            return self.run(grown, facts)
        why = self.batching.reason(parent, grown, facts)
        # At a small window a turn-count point is weighed against holding back (`worth_landing`).
        weighed = why is BatchReason.TURNS and self.batching.weighs(facts)
        if why is not None and not weighed:
            return mark_batch(self.run(grown, facts), facts, why)
        assert parent is not None  # noqa: S101 - reason() calls a missing parent a batch point
        # What the rules would change in the sent items is held back anyway: start them at
        # the new items, so a turn between batch points costs what is new, not what is pending.
        held = hold_back(parent, self.run(from_new_items(grown, len(parent.items)), facts))
        if why is None:
            return held
        # A trial: most weighed points at a large window are declined, and then hashing the
        # items the rules tightened (for the commit's digest) was work thrown away.
        landed = self.run(grown.deferring_digest(), facts)
        if self.batching.worth_landing(held, landed, facts):
            return mark_batch(landed.with_digest(), facts, why)
        return declined(held, facts)

    def settle(self, commit: ContextCommit, facts: Facts, why: BatchReason) -> ContextCommit:
        """Apply everything pending now (with a compaction: one prefix break instead of two)."""
        if self.batching is None:
            return commit
        facts = attrs.evolve(facts, head_turn=commit.next_turn())
        return mark_batch(self.run(commit, facts), facts, why)
