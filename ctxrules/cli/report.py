"""Readable text for commits and counterexamples, as the commands print them."""

from __future__ import annotations

from ctxrules.checker.runner import Counterexample
from ctxrules.commit import ContextCommit, ContextItem


def _cut(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def format_commit(commit: ContextCommit, width: int = 48) -> str:
    """One line per item: position, role, state, tokens, flags and the start of its text.

    >>> from ctxrules.commit import ContextItem
    >>> print(format_commit(ContextCommit("s").with_items([ContextItem("n1", "user", rendered="hi", tokens=5)])))
      #  role       state       tokens  flags  text
      0  user       full             5         hi
         total 5 tokens, 1 items
    """
    lines = ["  #  role       state       tokens  flags  text"]
    for index, item in enumerate(commit.items):
        flags = (
            ("L" if item.locked else "-") + ("A" if item.attached_from else "-")
            if item.locked or item.attached_from
            else ""
        )
        lines.append(
            f"{index:>3}  {item.role.value:<9}  {item.state.value:<10}  {item.tokens:>6}  {flags:<5}  {_cut(item.rendered, width)}"
        )
    lines.append(f"     total {commit.total_tokens} tokens, {len(commit.items)} items")
    return "\n".join(lines)


def _item_line(index: int, item: ContextItem, width: int) -> str:
    return (
        f"{index:>4}  {item.source_node_id:<12} {item.role.value:<9}  {item.state.value:<10}"
        f"  {item.tokens:>6}  {_cut(item.rendered, width)}"
    )


def format_diff(
    before: ContextCommit, after: ContextCommit, width: int = 40, limit: int = 20
) -> str:
    """The items that differ, position by position: ``-`` as they went in, ``+`` as they came out.

    >>> from ctxrules.commit import ContextItem
    >>> old = ContextCommit("s").with_items([ContextItem("n1", "tool", rendered="long", tokens=9)])
    >>> new = old.with_items([ContextItem("n1", "tool", state="aged", rendered="[stub]", tokens=3)])
    >>> print(format_diff(old, new))
    -   0  n1           tool       full             9  long
    +   0  n1           tool       aged             3  [stub]
      1 of 1 positions differ
    """
    lines: list[str] = []
    differing = 0
    for index in range(max(len(before.items), len(after.items))):
        old = before.items[index] if index < len(before.items) else None
        new = after.items[index] if index < len(after.items) else None
        if old == new:
            continue
        differing += 1
        if differing > limit:
            continue
        if old is not None:
            lines.append("-" + _item_line(index, old, width))
        if new is not None:
            lines.append("+" + _item_line(index, new, width))
    more = f" (first {limit} shown)" if differing > limit else ""
    lines.append(
        f"  {differing} of {max(len(before.items), len(after.items))} positions differ{more}"
    )
    return "\n".join(lines)


#: Commits longer than this are shown as a diff only.
_SHOWN_WHOLE = 40


def format_counterexample(found: Counterexample) -> str:
    """The rule, each broken invariant, the facts, the minimal commit and the diff, for a terminal."""
    lines = [f"rule {found.rule!r} breaks the contract"]
    if found.error is not None:
        lines.append(f"  it raised {found.error}")
    lines.extend(
        f"  invariant {v.invariant} ({v.name}): {v.message.split(': ', 1)[1]}"
        for v in found.violations
    )
    lines.append(
        f"facts: now={found.facts.now:g} head_turn={found.facts.head_turn} cited={sorted(found.facts.cited)}"
    )
    small = len(found.before.items) <= _SHOWN_WHOLE
    lines.extend(("before:", format_commit(found.before)) if small else
                 (f"before: {len(found.before.items)} items, {found.before.total_tokens} tokens",))  # fmt: skip
    if found.after is not None:
        if small:
            lines.extend(("after:", format_commit(found.after)))
        lines.extend(("diff (before -> after):", format_diff(found.before, found.after)))
    if found.other is not None and found.after is not None:
        lines.extend(("diff (this process -> the other):", format_diff(found.after, found.other)))
    return "\n".join(lines)
