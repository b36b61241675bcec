"""Recall handles: the short, stable name a tightened item shows so its original can be fetched.

A handle is derived from the item's source id alone, so it is the same on every turn and
in every process, and the text that carries it never disturbs a cached prompt prefix.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable

from ctxrules.commit import ContextItem

#: Every handle starts with this; the rest is lowercase base32 of a hash of the source id.
HANDLE_PREFIX = "h:"
#: Base32 characters after the prefix: 40 bits, unique within any one session in practice
#: (the recall index reports a collision rather than guessing).
HANDLE_CHARS = 8
#: Lowercase base32's alphabet, and every pair of its characters (10 bits each).
_BASE32 = "abcdefghijklmnopqrstuvwxyz234567"
_PAIRS = tuple(a + b for a in _BASE32 for b in _BASE32)
#: A handle anywhere in a text (the characters of lowercase base32, no padding).
HANDLE_PATTERN = re.compile(r"(?<![A-Za-z0-9:])h:[a-z2-7]{8}(?![a-z2-7])")
#: A summary's folds line (see `folds_line`), on a line of its own.
FOLDS_LINE_PATTERN = re.compile(
    r"^\[Folded \d+ items; recall h:[a-z2-7]{8} lists them all\..*\]\n?", re.MULTILINE
)
#: The most handles a summary names inline; the rest are listed by its own fold handle.
INLINE_HANDLES = 12


#: Handles kept, by source id: each batch point weighed names every pending stub's and
#: cleared result's handle again (a hash each), and a fold every folded item's.
_HANDLES_KEPT = 8_192


@functools.lru_cache(maxsize=_HANDLES_KEPT)
def handle_for(source_id: str) -> str:
    """The handle of a node or summary item: ``h:`` plus 8 base32 characters of its id's hash.

    >>> handle_for("n1"), handle_for("n1") == handle_for("n1"), handle_for("n2") != handle_for("n1")
    ('h:m5vyxocm', True, True)
    """
    # The 8 characters are lowercase base32 of the digest's first 5 bytes (40 bits), read
    # 10 bits at a time from a table of character pairs: the same characters as
    # `base64.b32encode` at half its cost (a first recall after a resume hashes every node).
    bits = int.from_bytes(hashlib.sha256(source_id.encode()).digest()[:5], "big")
    return (
        HANDLE_PREFIX
        + _PAIRS[bits >> 30]
        + _PAIRS[(bits >> 20) & 1023]
        + _PAIRS[(bits >> 10) & 1023]
        + _PAIRS[bits & 1023]
    )


def handle_source(item: ContextItem) -> str:
    r"""The id an item's handle is derived from: its source id, with the commit it was attached from.

    One node can arrive through several attached commits, tightened differently in each, so
    an attached copy is named per attachment and every handle names one original.

    >>> handle_source(ContextItem("n1", "user")), handle_source(ContextItem("n1", "user", attached_from="c_9"))
    ('n1', 'c_9\nn1')
    """
    if item.attached_from is None:
        return item.source_node_id
    return f"{item.attached_from}\n{item.source_node_id}"


def item_handle(item: ContextItem) -> str:
    """The handle an item shows when tightened (see `handle_source`).

    >>> item_handle(ContextItem("n1", "user")) == handle_for("n1")
    True
    """
    return handle_for(handle_source(item))


def fold_handle(folded_ids: Iterable[str]) -> str:
    """The handle of a compaction's fold: it lists every item the summary replaced.

    >>> fold_handle(["n1", "n2"]) == fold_handle(("n1", "n2")) != fold_handle(["n2", "n1"])
    True
    """
    return handle_for("fold\n" + "\n".join(folded_ids))


def handles_in(text: str) -> tuple[str, ...]:
    """Every handle a text names, in order of first appearance, without repeats.

    >>> handles_in("see h:abcdefgh and h:abcdefgh, not xh:abcdefgh or h:ABCDEFGH")
    ('h:abcdefgh',)
    """
    if "h:" not in text:
        # Most texts name no handle: a substring test in C, not a pass of the pattern.
        return ()
    return tuple(dict.fromkeys(HANDLE_PATTERN.findall(text)))


def recall_note(handle: str) -> str:
    """The short note a tightened item ends with.

    >>> recall_note("h:abcdefgh")
    '[recall h:abcdefgh]'
    """
    return f"[recall {handle}]"


def with_note(text: str, source_id: str, *, on: bool = True) -> str:
    """``text`` followed by the recall note of ``source_id`` (unchanged when ``on`` is false).

    >>> with_note("[Old tool result cleared]", "n1")
    '[Old tool result cleared] [recall h:m5vyxocm]'
    """
    return f"{text} {recall_note(handle_for(source_id))}" if on else text


def folds_line(groups: Iterable[tuple[str, str]], folded_ids: Iterable[str]) -> str:
    """The line a summary ends with: its fold handle and the first handles, grouped by label.

    ``groups`` pairs each folded item's label (``user``, ``tool read``) with its source id;
    at most `INLINE_HANDLES` are named, the fold handle lists them all.

    >>> print(folds_line([("tool read", "n1"), ("user", "n2"), ("tool read", "n3")], ["n1", "n2", "n3"]))
    [Folded 3 items; recall h:bc3tplto lists them all. tool read: h:m5vyxocm h:q4q5mzhp; user: h:asakspjo]
    """
    ids = tuple(folded_ids)
    by_label: dict[str, list[str]] = {}
    shown = 0
    for who, source_id in groups:
        if shown < INLINE_HANDLES:
            by_label.setdefault(who, []).append(handle_for(source_id))
            shown += 1
    listed = "; ".join(f"{who}: {' '.join(hs)}" for who, hs in by_label.items())
    more = len(ids) - shown
    rest = f" (+{more} more)" if more > 0 else ""
    head = f"[Folded {len(ids)} items; recall {fold_handle(ids)} lists them all."
    return f"{head} {listed}{rest}]" if listed else f"{head}]"


def without_folds_lines(text: str) -> str:
    r"""The text with earlier summaries' folds lines removed (a chained summary names its own).

    The earlier summary stays recallable by its handle, and its text keeps its line.

    >>> without_folds_lines("old facts\n[Folded 3 items; recall h:bc3tplto lists them all.]\nnew facts")
    'old facts\nnew facts'
    """
    return FOLDS_LINE_PATTERN.sub("", text)
