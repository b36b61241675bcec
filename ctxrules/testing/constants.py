"""The names a rule looks for: string constants in its code, its defaults and its closure.

A rule that acts only on a tool it names (``"screenshot"``) is never exercised by histories
whose tool names are a fixed list; ``ctxrules check`` reads the names the rule itself holds
and puts them into the histories it generates.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from types import CodeType

#: What can be a tool name: a short identifier-like string (a message text is not one).
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]{1,39}")
#: At most this many names are taken from one rule (the first found, in order).
MAX_NAMES = 24


def rule_names(rule: object) -> tuple[str, ...]:
    """Identifier-like strings the rule holds, each once: its parameters' first, then its code's.

    Defaults and closure cells (a factory's parameters, such as protected tool names) come
    before the constants of the code, which also hold keyword names and message texts.

    >>> def only_screenshots(commit, facts, tools=("screenshot",)):
    ...     return commit if "bash" in tools else commit
    >>> rule_names(only_screenshots)
    ('screenshot', 'bash')
    """
    # The rule itself sits one level above what it holds: its parameters and code are at depth 0.
    found = dict.fromkeys(name for name in _strings(rule, depth=-1) if _NAME.fullmatch(name))
    return tuple(found)[:MAX_NAMES]


def _parameters(function: object) -> Iterator[object]:
    """What a function was given rather than wrote: defaults and closure cells' contents."""
    yield from getattr(function, "__defaults__", None) or ()
    yield from (getattr(function, "__kwdefaults__", None) or {}).values()
    for cell in getattr(function, "__closure__", None) or ():
        try:
            yield cell.cell_contents
        except ValueError:  # an empty cell
            continue


def _strings(value: object, *, depth: int) -> Iterator[str]:
    """Strings inside ``value``: a function's constants, defaults and closure, or a container."""
    if depth > 3:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, (tuple, list, set, frozenset)):
        for element in sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value:
            yield from _strings(element, depth=depth + 1)
    elif isinstance(value, CodeType):
        for constant in value.co_consts:
            yield from _strings(constant, depth=depth + 1)
    else:
        function = getattr(value, "__func__", value)
        code = getattr(function, "__code__", None)
        if isinstance(code, CodeType):
            for held in _parameters(function):
                yield from _strings(held, depth=depth + 1)
            yield from _strings(code, depth=depth + 1)
