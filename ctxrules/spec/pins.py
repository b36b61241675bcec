"""A spec's `[[pins]]`: which new items are pinned on arrival, as declarative tests."""

from __future__ import annotations

from typing import Any

import attrs
from returns.result import Failure, Result, Success

from ctxrules.commit import ContextItem
from ctxrules.rules.facts import Facts
from ctxrules.spec.errors import Location, SpecError, describe
from ctxrules.spec.predicates import Predicate, normal_when, parse_when


@attrs.frozen
class PinWhen:
    """Pins a new item that passes every test of one ``[[pins]]`` entry's ``when``.

    >>> from ctxrules.spec.errors import Location
    >>> pin = parse_pins([{"when": {"role": "user", "position": {"le": 1}}}], Location("s")).unwrap()[0][0]
    >>> pin(ContextItem("n", "user", rendered="never push to main"), 0, Facts())
    True
    """

    when: tuple[Predicate, ...]

    def __call__(self, item: ContextItem, position: int, facts: Facts) -> bool:
        """Whether ``item``, arriving at ``position``, is pinned."""
        # On arrival the item is the last one: position_from_end is 0.
        return all(test.holds(item, position, position + 1, facts) for test in self.when)


def parse_pins(
    entries: object, where: Location
) -> Result[tuple[tuple[PinWhen, ...], list[dict[str, Any]]], tuple[SpecError, ...]]:
    """The pins an array of ``[[pins]]`` tables declares, and their normal form for the version."""
    if not isinstance(entries, list):
        return Failure(
            (where.error("an array of pin tables ([[pins]])", describe(entries), "wrong_type"),)
        )
    errors: list[SpecError] = []
    pins: list[PinWhen] = []
    plain: list[dict[str, Any]] = []
    for position, entry in enumerate(entries):
        at = where.index(position)
        if not isinstance(entry, dict):
            errors.append(
                at.error("a pin table with a 'when' table", describe(entry), "wrong_type")
            )
            continue
        unknown = sorted(set(entry) - {"when"})
        if unknown:
            errors.append(
                at.key(unknown[0]).error("only 'when' in a pin", repr(unknown[0]), "unknown_name")
            )
        if "when" not in entry:
            errors.append(at.key("when").error("a table of feature tests", "nothing", "missing"))
            continue
        parsed = parse_when(entry["when"], at.key("when"))
        if isinstance(parsed, Failure):
            errors.extend(parsed.failure())
            continue
        when = parsed.unwrap()
        pins.append(PinWhen(when))
        plain.append({"when": normal_when(when)})
    if errors:
        return Failure(tuple(errors))
    return Success((tuple(pins), plain))
