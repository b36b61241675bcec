"""The one way a rule changes an item: move it to a tighter state, never growing its tokens."""

from __future__ import annotations

import attrs

import ctxrules.render.item as item_rendering
from ctxrules.commit import ContextItem, State
from ctxrules.rules.facts import Facts


def tighten(
    item: ContextItem,
    state: State,
    facts: Facts,
    *,
    rendered: str | None = None,
    arguments: str | None = None,
    reason: str,
) -> ContextItem | None:
    """The item moved to ``state`` with new text, or None if the rule may not touch it.

    None when the item is locked or the move would loosen it. If the new text would cost
    more tokens than the current one, the current text is kept (invariant 3: tokens never
    grow when an item tightens).

    >>> from ctxrules.tokens import HeuristicCounter
    >>> facts = Facts(now=9.0, tokenizer=HeuristicCounter())
    >>> item = item_rendering.counted(ContextItem("n", "tool", rendered="x" * 400), facts.tokenizer)
    >>> small = tighten(item, State.AGED, facts, rendered="[stub]", reason="demo")
    >>> (small.state.value, small.rendered, small.tokens < item.tokens, small.changed_at)
    ('aged', '[stub]', True, 9.0)
    >>> tighten(small, State.FULL, facts, reason="demo") is None
    True
    """
    if item.locked or not item.state.may_become(state):
        return None
    candidate = attrs.evolve(
        item,
        state=state,
        rendered=item.rendered if rendered is None else rendered,
        arguments=item.arguments if arguments is None else arguments,
        reason=reason,
        changed_at=facts.now if state is not item.state else item.changed_at,
    )
    counted = item_rendering.counted(candidate, facts.tokenizer)
    if counted.tokens > item.tokens:
        counted = attrs.evolve(
            candidate, rendered=item.rendered, arguments=item.arguments, tokens=item.tokens
        )
    return counted
