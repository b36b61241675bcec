"""The names in use: what the folded assistant messages wrote, carried by the summary.

A summary folds the assistant's own messages to a line's head, and with them the exact
spellings the model was working with (a function it fixed, a test it ran, a path it
edited). The model tends to write those again; one bounded line keeps the most recently
written of them in view, merged from summary to summary as the artifact trail is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ctxrules.commit import ContextItem, State
from ctxrules.dag import Role
from ctxrules.rules.artifacts import newest_listed
from ctxrules.rules.hints import item_names, names

#: The summary line that carries the names.
NAMES_LINE_PREFIX = "[Names in use: "
#: Characters of names the line holds at most (the newest kept) at an input budget of
#: 16,000 tokens and more; less below it, as the trail line does.
NAMES_LINE_CHARS = 2_000
#: A JSON object's key: the call's schema, not a name the model chose.
_JSON_KEY = re.compile(r'"[A-Za-z_][A-Za-z0-9_]*"\s*:')
_NAMES_LINE = re.compile(r"^\[Names in use: (.*?)(?:; and \d+ earlier)?\]$", re.MULTILINE)


def names_in_line(text: str) -> tuple[str, ...]:
    r"""The names a summary's names line holds, oldest first (none when it has no such line).

    >>> names_in_line("x\n[Names in use: parse_args, cli.main]")
    ('parse_args', 'cli.main')
    """
    match = _NAMES_LINE.search(text)
    return tuple(n for n in match.group(1).split(", ") if n) if match else ()


def without_names_line(text: str) -> str:
    """The text without a names line (a chained summary writes its own, merged)."""
    return _NAMES_LINE.sub("", text)


def written(folded: Sequence[ContextItem]) -> list[str]:
    """The names the folded items wrote, in order of writing: an earlier summary's line first.

    The assistant's text counts, and its calls' arguments without their keys (an edit's old
    and new text names what it read); user messages and results do not: only what the
    model itself used. Within one message the most frequent name counts as the newest.
    """
    found: list[str] = []
    for item in folded:
        if item.state is State.SUMMARY:
            found.extend(names_in_line(item.rendered))
        elif item.role is Role.ASSISTANT:
            # Kept with the item: the aging rule read them at the batch points before.
            found.extend(reversed(item_names(item)))
        elif item.is_tool and item.arguments:
            found.extend(reversed(names(_JSON_KEY.sub(" ", item.arguments))))
    return found


def names_line(found: Iterable[str], chars: int = NAMES_LINE_CHARS, shown: str = "") -> str:
    """The line naming ``found`` (each once, in order of last use), newest kept first.

    At most ``chars`` characters of names; names ``shown`` holds (the summary's other
    lines) are left out, and the rest are counted.

    >>> names_line(["parse_args", "cli.main", "parse_args"])
    '[Names in use: cli.main, parse_args]'
    >>> names_line(["parse_args", "cli.main"], chars=10), names_line(["a_b"], shown="a_b")
    ('[Names in use: cli.main; and 1 earlier]', '')
    """
    return newest_listed(NAMES_LINE_PREFIX, (n for n in found if n not in shown), chars)
