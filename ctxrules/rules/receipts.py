"""Receipts: one deterministic line saying what the request shows shortened, and how to get it back."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ctxrules.commit import ContextItem, State

#: How each reason reads in a receipt.
_READS = {
    "capped": "cut on arrival",
    "tail_window": "aged to a stub",
    "gated": "cleared",
    "idle": "cleared after an idle hour",
}


def receipt(items: Iterable[ContextItem]) -> str:
    """What these items show shortened, counted by how, and how to recall them; "" when nothing.

    No clock and no ids in the text: the same items always give the same line, so a
    request that repeats it keeps the provider's cached prefix.

    >>> aged = ContextItem("a", "tool", state="aged", reason="tail_window")
    >>> print(receipt([aged, aged, ContextItem("b", "tool", state="summarized", reason="compacted")]))
    [Context note: 3 earlier items are shortened: 2 aged to a stub, 1 folded into the summary. Each names a handle (h:…); call recall with it for the whole text, or search_history to find one.]
    """
    counts: Counter[str] = Counter()
    for item in items:
        if item.state is State.FULL or item.state is State.SUMMARY:
            continue
        if item.state is State.SUMMARIZED:
            counts["folded into the summary"] += 1
        else:
            counts[_READS.get(item.reason, f"{item.state.value} ({item.reason})")] += 1
    if not counts:
        return ""
    parts = ", ".join(
        f"{n} {how}" for how, n in sorted(counts.items(), key=lambda p: (-p[1], p[0]))
    )
    total = sum(counts.values())
    return (
        f"[Context note: {total} earlier items are shortened: {parts}. Each names a handle "
        "(h:…); call recall with it for the whole text, or search_history to find one.]"
    )


def ending_with(text: str, note: str) -> str:
    r"""``text`` with ``note`` after it on a paragraph of its own (the note alone when ``text`` is empty).

    Every way in (`Context`, the framework integrations) ends a system text with its
    receipt this way, so the same history sends the same bytes.

    >>> ending_with("Be brief.", "[Context note: …]"), ending_with("", "[Context note: …]")
    ('Be brief.\n\n[Context note: …]', '[Context note: …]')
    """
    return f"{text}\n\n{note}" if text else note
