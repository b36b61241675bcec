"""``matches`` patterns, compiled by RE2: matching time is linear in the text, whatever the pattern.

Tool names come from logs, and a spec's pattern meets every one of them on every turn. A
backtracking engine (`re`) takes exponential time on patterns such as ``^(a+)+$`` against
a name of a few dozen ``a``; RE2 never backtracks. It refuses the few constructs that need
backtracking (backreferences, lookaround), and the spec error says so when it loads.
"""

from __future__ import annotations

from typing import Protocol

import re2

_OPTIONS = re2.Options()
# The error comes back as a value (a SpecError); RE2's own log line would only be noise.
_OPTIONS.log_errors = False


class Pattern(Protocol):
    """A compiled pattern: what a predicate needs of it."""

    def search(self, text: str) -> object | None:
        """A match anywhere in ``text``, or None."""
        ...


def compile_pattern(text: str) -> Pattern | str:
    r"""``text`` compiled by RE2, or why RE2 refuses it.

    >>> compile_pattern("^(a+)+$").search("a" * 40 + "!") is None
    True
    >>> compile_pattern("(a)\\1")
    'invalid escape sequence: \\1 (RE2 matches in linear time: no backreferences or lookaround)'
    >>> compile_pattern("grep(")
    'missing ): grep('
    """
    try:
        compiled: Pattern = re2.compile(text, options=_OPTIONS)
    except re2.error as error:
        reason = error.args[0] if error.args else error
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        if "escape" in reason or "perl operator" in reason:
            return f"{reason} (RE2 matches in linear time: no backreferences or lookaround)"
        return str(reason)
    return compiled
