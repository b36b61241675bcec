r"""JSON text in, values every layer can hold: the one boundary for untrusted JSON and text.

Valid JSON can still break what comes after it: a lone surrogate (``"\\ud800"``) cannot be
encoded as UTF-8 by the store, the exporter or a provider; ``1e999`` parses as infinity;
a 400-digit integer overflows a float and a database integer; 900 levels of nesting
exhaust the recursion of every walker downstream. `read_json` refuses the numbers and
the nesting with a reason, and `clean_text` replaces lone surrogates with U+FFFD.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

#: Deeper JSON is refused: real logs nest a few dozen levels; walkers recurse per level.
MAX_DEPTH = 200
#: Integers must fit a signed 64-bit column (SQLite, PostgreSQL ``bigint``).
MAX_INT = 2**63 - 1

_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonRefused(ValueError):
    """JSON text that parses but holds a value no layer can keep; ``line`` within the text."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


def clean_text(text: str) -> str:
    r"""``text`` with each lone surrogate replaced by U+FFFD, so it encodes as UTF-8.

    Anything but a str is returned as it is, for the checks that follow to refuse.

    >>> clean_text("hi \ud800!"), clean_text("plain")
    ('hi \ufffd!', 'plain')
    """
    if not isinstance(text, str) or text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonRefused(f"the number {text[:20]} is too large for a float")
    return value


def _integer(text: str) -> int:
    # Checked on the digits: int() of a huge literal is itself slow or refused.
    if len(text.lstrip("-")) > 19 or abs(int(text)) > MAX_INT:
        raise JsonRefused(f"the integer {text[:20]}… does not fit 64 bits")
    return int(text)


def _constant(name: str) -> object:
    raise JsonRefused(f"{name} is not a JSON value")


def _clean(value: object) -> object:
    """``value`` with its strings cleaned and its depth checked, without recursion."""
    root: list[object] = [value]
    # (value, its container, its index or key there, its depth)
    stack: list[tuple[object, Any, Any, int]] = [(value, root, 0, 1)]
    while stack:
        node, parent, slot, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise JsonRefused(f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(node, str):
            parent[slot] = clean_text(node)
        elif isinstance(node, list):
            stack.extend((inner, node, i, depth + 1) for i, inner in enumerate(node))
        elif isinstance(node, dict):
            cleaned = {clean_text(key): inner for key, inner in node.items()}
            parent[slot] = cleaned
            stack.extend((inner, cleaned, key, depth + 1) for key, inner in cleaned.items())
    return root[0]


def _line_of(text: str, reason: str) -> int | None:
    """The line of the first token that `reason` is about, found outside strings; None if unsure."""
    token = reason.split()[2 if reason.startswith("the ") else 0].rstrip("…")
    in_string = escaped = False
    line = 1
    for index, char in enumerate(text):
        if char == "\n":
            line += 1
        if in_string:
            escaped = not escaped and char == "\\"
            in_string = escaped or char != '"'
        elif char == '"':
            in_string = True
        elif text.startswith(token, index):
            return line
    return None


def read_json(text: str) -> object:
    r"""The JSON value of ``text``, its strings cleaned; raises `json.JSONDecodeError` or `JsonRefused`.

    >>> read_json('{"a": ["x\\ud800"]}')
    {'a': ['x\ufffd']}
    >>> read_json('{"t": 1e999}')
    Traceback (most recent call last):
    ...
    ctxrules.dag.json_values.JsonRefused: the number 1e999 is too large for a float
    """
    try:
        value = json.loads(text, parse_float=_number, parse_int=_integer, parse_constant=_constant)
    except JsonRefused as refused:
        refused.line = _line_of(text, refused.reason)
        raise
    except RecursionError:
        raise JsonRefused(f"nested more than {MAX_DEPTH} levels deep") from None
    return _clean(value)
