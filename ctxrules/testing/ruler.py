"""The rulers `ctxrules check` counts with: the heuristic and tiktoken, their counts remembered."""

from __future__ import annotations

import functools

from ctxrules.tokens import HeuristicCounter, Tokenizer
from ctxrules.tokens.memo import MemoCounter

#: The ruler `ctxrules check` counts with. A check counts the same texts again and again
#: (every output of every rule, rendered), so each repeat is a lookup; generated texts are
#: short and many, hence the larger bounds.
CHECK_RULER = MemoCounter(HeuristicCounter(), entries=200_000, characters=50_000_000)
#: The rulers a rule meets, by name: a rule that counts with its own ruler agrees with one
#: of them at most.
RULER_NAMES = ("heuristic", "tiktoken")


@functools.cache
def check_ruler(name: str) -> Tokenizer:
    """The memoised ruler of this name (tiktoken's encoding loads on first use, never at import).

    >>> check_ruler("heuristic") is CHECK_RULER
    True
    """
    if name == "heuristic":
        return CHECK_RULER
    # Imported here: loading an encoding is work a strategy module does not do on import.
    from ctxrules.tokens import default_tokenizer  # noqa: PLC0415

    return MemoCounter(default_tokenizer(), entries=50_000, characters=20_000_000)


def ruler_name(tokenizer: Tokenizer) -> str:
    """The name under which a child process rebuilds ``tokenizer`` (see `check_ruler`)."""
    return "heuristic" if "heuristic" in tokenizer.name else "tiktoken"
