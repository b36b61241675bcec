"""The three gates: clear a large old result only if it is far in turns, old in time, and uncited."""

from __future__ import annotations

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules.facts import Facts
from ctxrules.rules.handles import handle_source, with_note
from ctxrules.rules.marks import mark_key
from ctxrules.rules.pipeline import Rule
from ctxrules.rules.protected import is_protected, protected_keys
from ctxrules.rules.scan import scan
from ctxrules.rules.tighten import tighten


def gate_placeholder(tokens: int) -> str:
    """The text a gated result is replaced with.

    >>> gate_placeholder(1200)
    '[Old tool result content cleared (was 1200 tokens)]'
    """
    return f"[Old tool result content cleared (was {tokens} tokens)]"


def gate_tool_results(
    min_turns: int,
    min_seconds: float,
    min_tokens: int,
    protect_first_n: int,
    protected_tools: tuple[str, ...],
    *,
    handles: bool = True,
) -> Rule:
    """Clear a tool result that passes all three gates and is worth it.

    Gates: at least ``min_turns`` assistant turns old, created at least ``min_seconds``
    ago, and not cited by a later message; then at least ``min_tokens`` tokens, not among
    the first ``protect_first_n`` items and not a protected tool. The placeholder names
    the result's recall handle unless ``handles`` is false.
    """
    key = mark_key(
        "gate_tool_results",
        {
            "min_turns": min_turns,
            "min_seconds": min_seconds,
            "min_tokens": min_tokens,
            "protect_first_n": protect_first_n,
            "protected_tools": protected_tools,
            "handles": handles,
        },
    )
    protected = protected_keys(protected_tools)

    def rule(commit: ContextCommit, facts: Facts) -> ContextCommit:
        changes: dict[int, ContextItem] = {}
        stop = commit.marks.get(key, 0)
        for index, item in scan(commit, stop, facts):
            if facts.head_turn - item.turn < min_turns:
                break
            candidate = (
                item.is_tool
                and index >= protect_first_n
                and not is_protected(item.tool_name, protected)
                and not item.locked
                and item.state.tightness < State.CLEARED.tightness
                and item.tokens >= min_tokens
                and item.source_node_id not in facts.cited
            )
            if candidate:
                if facts.now - item.created_at < min_seconds:
                    # Later items are newer still; come back to this one next turn.
                    break
                cleared = tighten(
                    item,
                    State.CLEARED,
                    facts,
                    rendered=with_note(
                        gate_placeholder(item.tokens), handle_source(item), on=handles
                    ),
                    reason="gated",
                )
                if cleared is not None:
                    changes[index] = cleared
            stop = index + 1
        return commit.replace_items(changes).with_mark(key, stop)

    return rule
