"""The item features a declarative rule's ``when`` can test, each with its type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeAlias

import attrs
from pyrsistent import PMap, pmap

from ctxrules.commit import ContextItem, State
from ctxrules.dag import Role
from ctxrules.rules.facts import Facts

#: The type of a feature's value; operands are checked against it when a spec loads.
FeatureKind = Literal["str", "int", "float", "bool"]

#: A feature's value, from the item, its position, the number of items and the facts.
Extract: TypeAlias = Callable[[ContextItem, int, int, Facts], object]


@attrs.frozen
class Feature:
    """One thing ``when`` can test: its name, type, meaning and how to read it from an item.

    ``choices`` lists the only values an enumerated string feature can take.
    """

    name: str
    kind: FeatureKind
    doc: str
    extract: Extract = attrs.field(repr=False)
    choices: tuple[str, ...] = ()


def _feature(
    name: str, kind: FeatureKind, doc: str, extract: Extract, choices: tuple[str, ...] = ()
) -> tuple[str, Feature]:
    return name, Feature(name, kind, doc, extract, choices)


#: States a declarative rule can match; summary and summarized items are never matched.
MATCHABLE_STATES = (State.FULL, State.AGED, State.CLEARED)

_ALL = (
    _feature(
        "role",
        "str",
        "who produced the item",
        lambda i, _p, _n, _f: i.role.value,
        tuple(r.value for r in Role),
    ),
    _feature(
        "tool_name",
        "str",
        "the tool's name; absent on other items",
        lambda i, _p, _n, _f: i.tool_name,
    ),
    _feature(
        "state",
        "str",
        "the item's current state",
        lambda i, _p, _n, _f: i.state.value,
        tuple(s.value for s in MATCHABLE_STATES),
    ),
    _feature(
        "turn_age",
        "int",
        "turns before the newest: 0 for the newest reply, its tool results and what follows",
        # head_turn is the turn the next reply will get, so the newest reply is one before it.
        lambda i, _p, _n, f: max(f.head_turn - i.turn - 1, 0),
    ),
    _feature(
        "seconds_since_change",
        "float",
        "seconds since the item's state last changed",
        lambda i, _p, _n, f: f.now - i.changed_at,
    ),
    _feature(
        "age_seconds",
        "float",
        "seconds since the item was created",
        lambda i, _p, _n, f: f.now - i.created_at,
    ),
    _feature(
        "text",
        "str",
        "the item's text as the model reads it (test it with 'matches')",
        lambda i, _p, _n, _f: i.rendered,
    ),
    _feature("tokens", "int", "the item's current token count", lambda i, _p, _n, _f: i.tokens),
    _feature(
        "cited",
        "bool",
        "whether a later message cites the item",
        lambda i, _p, _n, f: i.source_node_id in f.cited,
    ),
    _feature(
        "attached",
        "bool",
        "whether the item came from an attached commit",
        lambda i, _p, _n, _f: i.attached_from is not None,
    ),
    _feature(
        "locked",
        "bool",
        "whether the item is locked (locked items are never changed)",
        lambda i, _p, _n, _f: i.locked,
    ),
    _feature(
        "position",
        "int",
        "index from the start, 0 for the first item",
        lambda _i, p, _n, _f: p,
    ),
    _feature(
        "position_from_end",
        "int",
        "index from the end, 0 for the last item",
        lambda _i, p, n, _f: n - 1 - p,
    ),
)

#: Every feature by name.
FEATURES: PMap[str, Feature] = pmap(dict(_ALL))

#: Feature names in the order the docs and error messages list them.
FEATURE_NAMES: tuple[str, ...] = tuple(name for name, _ in _ALL)
