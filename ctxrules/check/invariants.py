"""One predicate per invariant; each returns the violations it found. Tests use these too."""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Iterable, Sequence

from ctxrules.check.differing import differing_pairs
from ctxrules.check.pins import pins_kept
from ctxrules.check.violations import Violation
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import Message, ToolResultBlock, ToolUseBlock, count_messages, render_commit
from ctxrules.tokens import Tokenizer


def items_kept(before: ContextCommit, after: ContextCommit) -> list[Violation]:
    """Invariant 13 for a rule: the same items, in the same order, none dropped or duplicated."""
    if len(before.items) == len(after.items) and all(
        (a.source_node_id, a.attached_from) == (b.source_node_id, b.attached_from)
        for _, a, b in differing_pairs(before, after)
    ):
        return []  # an item left as the same object is the same item in the same place
    old = [(i.source_node_id, i.attached_from) for i in before.items]
    new = [(i.source_node_id, i.attached_from) for i in after.items]
    if old == new:
        return []
    if sorted(old, key=str) == sorted(new, key=str):
        at = next(i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b)
        return [
            Violation(
                13,
                (old[at][0], new[at][0]),
                f"the input order ({old[at][0]} at position {at})",
                f"{new[at][0]} moved there (items reordered)",
            )
        ]
    missing = sorted({n for n, _ in old} - {n for n, _ in new})
    extra = sorted({n for n, _ in new} - {n for n, _ in old})
    found = (
        f"{len(new)} items"
        + (f", missing {missing}" if missing else "")
        + (f", unexpected {extra}" if extra else "")
    )
    return [Violation(13, tuple(missing or extra), f"the {len(old)} input items in order", found)]


def monotone_tightening(before: ContextCommit, after: ContextCommit) -> list[Violation]:
    """Invariant 3: no item loosens; a tightened item never grows; a full item keeps its text."""
    if items_kept(before, after):
        return []
    found: list[Violation] = []
    # An item left as the same object neither loosens, grows nor changes its text.
    for _, old, new in differing_pairs(before, after):
        ids = (old.source_node_id,)
        if not old.state.may_become(new.state):
            found.append(
                Violation(
                    3,
                    ids,
                    f"a state at least as tight as {old.state.value!r}",
                    repr(new.state.value),
                )
            )
        elif new.tokens > old.tokens:
            found.append(Violation(3, ids, f"at most {old.tokens} tokens", f"{new.tokens} tokens"))
        elif new.state is State.FULL and (new.rendered, new.arguments) != (
            old.rendered,
            old.arguments,
        ):
            found.append(Violation(3, ids, "a full item's text unchanged", "changed text"))
    return found


def locked_untouched(before: ContextCommit, after: ContextCommit) -> list[Violation]:
    """Invariant 4: every locked item is exactly as it was."""
    if items_kept(before, after):
        return []
    return [
        Violation(
            4,
            (old.source_node_id,),
            "the locked item unchanged",
            f"state {new.state.value!r}, reason {new.reason!r}",
        )
        for _, old, new in differing_pairs(before, after)
        if old.locked and old != new
    ]


def one_ruler(commit: ContextCommit, tokenizer: Tokenizer) -> list[Violation]:
    """Invariant 10: ``total_tokens`` equals the count of what `render_commit` sends."""
    return ruler_violations(commit, count_messages(render_commit(commit), tokenizer))


def ruler_violations(commit: ContextCommit, actual: int) -> list[Violation]:
    """Invariant 10 given the rendered count ``actual``: none, or the one it breaks."""
    if commit.total_tokens == actual:
        return []
    return [
        Violation(
            10,
            (commit.id,),
            f"total_tokens == {actual} (the rendered count)",
            str(commit.total_tokens),
        )
    ]


def protocol_valid(messages: Sequence[Message]) -> list[Violation]:
    """Invariant 11: every tool result follows its call, once; every call is answered; call ids are unique."""
    found: list[Violation] = []
    for index in range(len(messages)):
        found.extend(result_violations(messages, index))
    seen: set[str] = set()
    for index in range(len(messages)):
        uses, broken = call_violations(messages, index, seen)
        found.extend(broken)
        seen.update(uses)
    return found


def result_violations(messages: Sequence[Message], index: int) -> list[Violation]:
    """Invariant 11 at one message: its tool results against the calls of the message before."""
    results = [b.tool_use_id for b in messages[index].blocks if isinstance(b, ToolResultBlock)]
    if not results:
        return []
    previous = messages[index - 1] if index else None
    calls = (
        {b.id for b in previous.blocks if isinstance(b, ToolUseBlock)}
        if previous and previous.role == "assistant"
        else set()
    )
    found = [
        Violation(
            11,
            (result,),
            "its tool call in the preceding assistant message",
            "an orphan tool result",
        )
        for result in results
        if result not in calls
    ]
    # Two results for one call (a repeated call id is reported where it is made).
    if len(set(results)) < len(results):
        found.extend(
            Violation(11, (result,), "one result per tool call", f"{count} results")
            for result, count in sorted(Counter(results).items())
            if count > 1
        )
    return found


def call_violations(
    messages: Sequence[Message], index: int, seen: Container[str]
) -> tuple[list[str], list[Violation]]:
    """Invariant 11 at one message: its call ids, repeated (``seen`` before it) or unanswered."""
    uses = [b.id for b in messages[index].blocks if isinstance(b, ToolUseBlock)]
    if not uses:
        return uses, []
    # Providers reject a repeated call id: a result could pair with the wrong call.
    found = [
        Violation(11, (call,), "tool call ids unique in the request", "a repeated tool call id")
        for call in uses
        if call in seen
    ]
    following = messages[index + 1] if index + 1 < len(messages) else None
    answered = (
        {b.tool_use_id for b in following.blocks if isinstance(b, ToolResultBlock)}
        if following
        else set()
    )
    found.extend(
        Violation(11, (call,), "a result in the next message", "a tool call without its result")
        for call in uses
        if call not in answered
    )
    return uses, found


def one_summary(commit: ContextCommit) -> list[Violation]:
    """Invariant 12: at most one item is an active summary."""
    return one_summary_of(commit.items)


def one_summary_of(items: Iterable[ContextItem]) -> list[Violation]:
    """Invariant 12 on a commit's items (only its summaries count)."""
    active = tuple(i.source_node_id for i in items if i.state is State.SUMMARY)
    return (
        []
        if len(active) <= 1
        else [Violation(12, active, "at most one active summary", f"{len(active)}")]
    )


def rule_step(before: ContextCommit, after: ContextCommit) -> list[Violation]:
    """What a rule must keep between its input and output: invariants 13, 3, 4 and 17."""
    return (
        items_kept(before, after)
        + monotone_tightening(before, after)
        + locked_untouched(before, after)
        + pins_kept(before, after)
    )
