"""Readable text for commits and counterexamples, as the commands print them."""

from __future__ import annotations

from ctxrules.commit import ContextCommit
from ctxrules.testing.runner import Counterexample


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


def format_counterexample(found: Counterexample) -> str:
    """The rule, each broken invariant, and the commit before and after, for a terminal."""
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
    lines.extend(("before:", format_commit(found.before)))
    if found.after is not None:
        lines.extend(("after:", format_commit(found.after)))
    return "\n".join(lines)
