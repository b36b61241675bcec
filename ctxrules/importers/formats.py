"""The formats an importer reads, by name, and the check of a name given by a caller."""

from __future__ import annotations

import difflib
from typing import Literal, TypeGuard

#: A log format the importers read.
Format = Literal["claude-code", "openai-chat", "langchain", "ctxrules-jsonl"]

#: Every format, in the order detection tries them.
FORMATS: tuple[Format, ...] = ("claude-code", "openai-chat", "langchain", "ctxrules-jsonl")


def is_format(name: object) -> TypeGuard[Format]:
    """Whether ``name`` is one of `FORMATS`.

    >>> is_format("langchain"), is_format("langchian")
    (True, False)
    """
    return name in FORMATS


def unknown_format(name: object) -> str:
    """Why ``name`` is not a format, with the closest valid name when there is one.

    >>> unknown_format("claude")
    "format='claude': expected one of ['claude-code', 'openai-chat', 'langchain', 'ctxrules-jsonl'] (did you mean 'claude-code'?)"
    """
    guess = difflib.get_close_matches(name, FORMATS, n=1) if isinstance(name, str) else []
    hint = f" (did you mean {guess[0]!r}?)" if guess else ""
    return f"format={name!r}: expected one of {list(FORMATS)}{hint}"
