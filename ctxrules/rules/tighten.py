"""The one way a rule changes an item: move it to a tighter state, never growing its tokens."""

from __future__ import annotations

import operator
from typing import Any

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
    changed_at = facts.now if state is not item.state else item.changed_at
    text = item.rendered if rendered is None else rendered
    args = item.arguments if arguments is None else arguments
    key = (state, text, args)
    kept = _kept(item, key, facts)
    if kept is not None:
        if kept.reason == reason and kept.changed_at == changed_at:
            return kept
        return _same_text(evolved(kept, reason=reason, changed_at=changed_at), kept)
    candidate = evolved(
        item, state=state, rendered=text, arguments=args, reason=reason, changed_at=changed_at
    )
    counted = item_rendering.counted(candidate, facts.tokenizer)
    if counted.tokens > item.tokens:
        counted = attrs.evolve(
            candidate, rendered=item.rendered, arguments=item.arguments, tokens=item.tokens
        )
    _keep(item, key, facts, counted)
    return counted


#: `ContextItem`'s arguments in the order it takes them, read in one call (`evolved`).
_FIELDS = tuple(field.name for field in attrs.fields(ContextItem) if field.init)
_READ = operator.attrgetter(*_FIELDS)
_AT = {name: at for at, name in enumerate(_FIELDS)}
#: Whether every argument is positional and named as its field (else `evolved` is `attrs.evolve`).
_POSITIONAL = all(
    not field.kw_only and field.alias == field.name
    for field in attrs.fields(ContextItem)
    if field.init
)


def evolved(item: ContextItem, **changes: object) -> ContextItem:
    """``attrs.evolve(item, **changes)``, at half its cost.

    A batch point weighed and declined dates every pending stub and cleared result again
    (their ``changed_at``), and a fold makes a summarized copy of each item it takes:
    hundreds of copies, each reading the fields in one C call instead of one by one.

    >>> item = ContextItem("n", "tool", rendered="x", reason="new")
    >>> evolved(item, reason="aged", changed_at=2.0) == attrs.evolve(item, reason="aged", changed_at=2.0)
    True
    """
    if not _POSITIONAL:
        named: dict[str, Any] = changes
        return attrs.evolve(item, **named)
    values: list[Any] = list(_READ(item))
    for name, value in changes.items():
        values[_AT[name]] = value
    return ContextItem(*values)


def retightened(previous: ContextItem, item: ContextItem, facts: Facts) -> ContextItem:
    """What `tighten` gives now for ``item`` where it gave ``previous`` before (same state, text, reason).

    Only the date can differ: ``changed_at`` is the facts' time when the state changes, as
    `tighten` sets it. A batch point weighed again asks for the same tightening of every
    pending item; this answers it without building its text again.
    """
    changed_at = facts.now if previous.state is not item.state else item.changed_at
    if previous.changed_at == changed_at:
        return previous
    return _same_text(evolved(previous, changed_at=changed_at), previous)


#: The key under which an item keeps its recent tightenings (`ContextItem.remember`).
_TIGHTENED_KEY = "tightened"
#: Tightenings kept per item: a rule tightens an item one way; batching repeats it each turn.
_TIGHTENINGS_KEPT = 4
#: One kept tightening: the state, text and arguments asked for, the ruler, the result.
_Tightening = tuple[State, str, str, object, ContextItem]


def _kept(item: ContextItem, key: tuple[State, str, str], facts: Facts) -> ContextItem | None:
    """The item tightened this way before, counted by the same tokenizer, if it was kept.

    Under batching, pending tightening is computed again every turn until a batch point
    lands it: kept, an item is rendered and counted once per way it is tightened.
    """
    memo = item.memo
    kept: tuple[_Tightening, ...] = memo.get(_TIGHTENED_KEY, ()) if memo is not None else ()  # type: ignore[assignment]
    state, text, args = key
    for found in kept:
        if (
            found[0] is state
            and found[3] is facts.tokenizer
            and found[1] == text
            and found[2] == args
        ):
            return found[4]
    return None


def _keep(
    item: ContextItem, key: tuple[State, str, str], facts: Facts, result: ContextItem
) -> None:
    # A small tuple, not a dict: every item a rule ever tightened holds it, in every commit
    # that still holds the item (the older commits of a long session hold many).
    memo = item.memo
    kept: tuple[_Tightening, ...] = memo.get(_TIGHTENED_KEY, ()) if memo is not None else ()  # type: ignore[assignment]
    entry: _Tightening = (*key, facts.tokenizer, result)
    item.remember(_TIGHTENED_KEY, (*kept[1 - _TIGHTENINGS_KEPT :], entry))


def _same_text(item: ContextItem, like: ContextItem) -> ContextItem:
    """``item`` keeping the rendered messages of ``like``, which has the same text."""
    messages = like.memo.get(item_rendering.MESSAGES_KEY) if like.memo is not None else None
    if messages is not None:
        item.remember(item_rendering.MESSAGES_KEY, messages)
    return item
