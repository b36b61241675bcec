"""Cutting a call's JSON arguments so that its short fields (a path, a command) stay whole."""

from __future__ import annotations

import json

from ctxrules.rules.text import ELLIPSIS

#: A field whose JSON text is at most this long is kept whole: paths, commands, flags, ids.
SHORT_FIELD_CHARS = 160
#: The fewest characters a cut long field keeps.
MIN_FIELD_CHARS = 16


def cut_arguments(arguments: str, limit: int, marker: str = ELLIPSIS) -> str | None:
    """JSON object ``arguments`` within about ``limit`` characters, short fields whole; None if not one.

    Long values (a file's content, a patch) share what is left, each cut to its head with
    ``marker`` after it, so the file a call wrote is still named after the cut (the
    artifact trail). The result is a JSON object again, so every provider accepts it.

    >>> cut_arguments('{"content": "' + "x" * 500 + '", "file_path": "/src/app/main.py"}', 80)
    '{"content":"xxxxxxxxxxxxxxxxxxxxxxxxxx…","file_path":"/src/app/main.py"}'
    >>> cut_arguments("not json", 3) is None
    True
    """
    if len(arguments) <= limit:
        return arguments
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict) or not parsed:
        return None
    dumped = {key: _dumps(value) for key, value in parsed.items()}
    long_keys = [key for key, text in dumped.items() if len(text) > SHORT_FIELD_CHARS]
    if not long_keys:
        return None
    fixed = sum(len(_dumps(key)) + 2 for key in parsed) + sum(
        len(text) for key, text in dumped.items() if key not in long_keys
    )
    share = max((limit - fixed) // len(long_keys) - len(marker) - 2, MIN_FIELD_CHARS)
    while True:
        cut = {
            key: (_cut(value, share, marker) if key in long_keys else value)
            for key, value in parsed.items()
        }
        out = _dumps(cut)
        # Escapes can make a cut value longer than its characters: shrink until it fits.
        if len(out) <= limit or share <= MIN_FIELD_CHARS:
            return out
        share = max(share * 3 // 4, MIN_FIELD_CHARS)


def _cut(value: object, chars: int, marker: str) -> str:
    text = value if isinstance(value, str) else _dumps(value)
    return text if len(text) <= chars else text[:chars] + marker


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
