"""Freeze JSON-like payloads on the way in and thaw them on the way out."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pyrsistent import PMap, PVector, pmap, pvector
from returns.result import Failure, Result, Success

from ctxrules.dag.errors import InvalidPayload
from ctxrules.dag.json_values import MAX_DEPTH, MAX_INT, clean_text

#: A frozen JSON-like value: scalars, ``PVector`` for lists and ``PMap`` for objects.
Frozen = None | bool | int | float | str | PVector["Frozen"] | PMap[str, "Frozen"]


class _NotJson(Exception):
    def __init__(self, path: str, found: str) -> None:
        self.path = path
        self.found = found


def _freeze(value: object, path: str, depth: int = 0) -> Frozen:  # noqa: C901 - one flat case per JSON type
    if depth > MAX_DEPTH:
        raise _NotJson(path, f"a value nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, str):
        # The one boundary for text: a lone surrogate would fail every UTF-8 encoder later.
        return clean_text(value)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if abs(value) > MAX_INT:
            raise _NotJson(path, "an integer that does not fit 64 bits")
        return value
    if isinstance(value, float):
        # NaN and infinities do not survive a JSON round trip, so refuse them here.
        if not math.isfinite(value):
            raise _NotJson(path, repr(value))
        return value
    if isinstance(value, Mapping):
        items: dict[str, Frozen] = {}
        for key, inner in value.items():
            if not isinstance(key, str):
                raise _NotJson(f"{path}.{key!r}", f"non-str key of type {type(key).__name__}")
            items[clean_text(key)] = _freeze(inner, f"{path}.{key}", depth + 1)
        return pmap(items)
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return pvector(_freeze(inner, f"{path}[{i}]", depth + 1) for i, inner in enumerate(value))
    raise _NotJson(path, f"a value of type {type(value).__name__}")


def freeze(value: object, path: str = "value") -> Result[Frozen, InvalidPayload]:
    """Freeze a JSON-like value, or fail naming the first part that is not JSON-like.

    >>> freeze({"a": [1, {"b": None}]}).unwrap()
    pmap({'a': pvector([1, pmap({'b': None})])})
    >>> print(freeze({"a": {1, 2}}, "input").failure())
    input.a: expected a JSON-like value (dict with str keys, list, str, int, float, bool or None), found a value of type set
    """
    try:
        return Success(_freeze(value, path))
    except _NotJson as err:
        return Failure(InvalidPayload(err.path, err.found))


def freeze_all(values: Mapping[str, object]) -> tuple[Frozen, ...] | None:
    """Each value frozen, in order, or None if any is not JSON-like (no `Result` per value).

    >>> freeze_all({"input": [1], "output": "ok"})
    (pvector([1]), 'ok')
    """
    try:
        return tuple(_freeze(value, path) for path, value in values.items())
    except _NotJson:
        return None


def freeze_or_raise(value: object) -> Frozen:
    """Freeze for attrs converters; public constructors check with `freeze` first."""
    try:
        return _freeze(value, "value")
    except _NotJson as err:
        raise TypeError(InvalidPayload(err.path, err.found).message) from None


def thaw(value: Frozen) -> object:
    """Turn a frozen payload back into plain dicts and lists.

    >>> thaw(freeze({"a": [1, 2]}).unwrap())
    {'a': [1, 2]}
    """
    if isinstance(value, PMap):
        return {key: thaw(inner) for key, inner in value.items()}
    if isinstance(value, PVector):
        return [thaw(inner) for inner in value]
    return value
