"""Expanding an attach pointer: another branch's commit becomes a marked block of items."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

import ctxrules.render.item as item_rendering
from ctxrules.commit.commit import ContextCommit
from ctxrules.commit.item import ContextItem
from ctxrules.commit.state import State
from ctxrules.dag import MARKER_PREFIX, Call, Role, marker_id, pointer_commit
from ctxrules.tokens import Tokenizer

OPEN = "attach_open"
CLOSE = "attach_close"
FAILED = "attach_failed"
#: The id prefix of the one item that stands for an attach that could not be loaded.
FAILED_PREFIX = "attach-failed:"


def failed_id(session_id: str, commit_id: str) -> str:
    """The id of the one item standing for an attach that could not be loaded."""
    return f"{FAILED_PREFIX}{session_id}:{commit_id}"


def is_marker(item: ContextItem) -> bool:
    """Whether the item opens or closes an attached block (by its id, which rules never change)."""
    return item.source_node_id.startswith(MARKER_PREFIX)


def stands_for_pointer(item: ContextItem) -> bool:
    """Whether the item is an attach's marker or failure notice: made from the pointer, not history."""
    return is_marker(item) or item.source_node_id.startswith(FAILED_PREFIX)


def attach_blocks(items: Sequence[ContextItem]) -> list[tuple[int, int]]:
    """The ``(open, close)`` positions of each attached block; an unclosed one runs to the end.

    A block's open and close markers share one id, so blocks are found by id, whatever
    state or reason a rule or a compaction has since given the markers.

    >>> ids = ["a", "attach:s:c1", "x", "attach:s:c1"]
    >>> attach_blocks([ContextItem(i, "user") for i in ids])
    [(1, 3)]
    """
    blocks: list[tuple[int, int]] = []
    opened: dict[str, int] = {}
    for index, item in enumerate(items):
        if not is_marker(item):
            continue
        start = opened.pop(item.source_node_id, None)
        if start is None:
            opened[item.source_node_id] = index
        else:
            blocks.append((start, index))
    blocks.extend((start, len(items) - 1) for start in opened.values())
    return sorted(blocks)


def _marker(
    call: Call, commit_id: str, reason: str, text: str, turn: int, *, locked: bool
) -> ContextItem:
    session = call.metadata.get("session")
    # A failed attach is one item, not a block, so its id is outside the marker prefix.
    make_id = failed_id if reason == FAILED else marker_id
    return ContextItem(
        make_id(session if isinstance(session, str) else "", commit_id),
        Role.USER,
        rendered=text,
        reason=reason,
        attached_from=commit_id,
        locked=locked,
        turn=turn,
        created_at=call.created_at,
        changed_at=call.created_at,
    )


def _copy(
    item: ContextItem, source: ContextCommit, call: Call, turn: int, *, locked: bool
) -> ContextItem:
    # Copies start full and unlocked (locked for a merge's base peer) and age with the
    # pointer's turn; a source summary becomes plain text so this commit keeps one summary.
    rendered = (
        item_rendering.SUMMARY_PREFIX + item.rendered
        if item.state is State.SUMMARY
        else item.rendered
    )
    call_id = f"{source.id[2:12]}_{item.tool_call_id}" if item.tool_call_id else None
    return attrs.evolve(
        item,
        role=Role.ASSISTANT if item.state is State.SUMMARY else item.role,
        state=State.FULL,
        rendered=rendered,
        locked=locked,
        # Nested blocks keep their markers, so their boundaries survive the copy.
        reason=item.reason
        if item.reason in (OPEN, CLOSE, FAILED)
        else f"attached_from:{source.id}",
        merged_into=None,
        attached_from=item.attached_from or source.id,
        tool_call_id=call_id,
        turn=turn,
        changed_at=call.created_at,
    )


def expand_pointer(
    call: Call,
    commit: ContextCommit,
    sources: Mapping[str, ContextCommit],
    *,
    turn: int,
    tokenizer: Tokenizer,
    rules_version: str = "",
) -> tuple[list[ContextItem], frozenset[str]]:
    """The items an attach pointer adds to ``commit`` and the source ids now expanded.

    Nothing if the source was already expanded along this chain (invariant 6); one user
    item saying what could not be loaded if ``sources`` lacks it.
    """
    commit_id = pointer_commit(call)
    if commit_id in commit.attached:
        return [], frozenset()
    locked = call.metadata.get("base") is True
    source = sources.get(commit_id)
    if source is None:
        text = f"[attach failed: commit {commit_id} of session {call.metadata.get('session')} could not be loaded]"
        failed = _marker(call, commit_id, FAILED, text, turn, locked=False)
        return [item_rendering.counted(failed, tokenizer)], frozenset({commit_id})
    expanded = {commit_id} | set(source.attached)
    nested_seen = commit.attached
    body = [
        _copy(item, source, call, turn, locked=locked)
        for item in source.items
        if item.state is not State.SUMMARIZED
        and (item.attached_from is None or item.attached_from not in nested_seen)
    ]
    # A source built by other rules is allowed; the block says so, for the model and for audits.
    note = (
        ""
        if source.rules_version == rules_version
        else f", built by rules {source.rules_version[:12] or 'unknown'}"
    )
    opening = (
        f"[attached context from session {source.session_id}, commit {source.id}{note}: begin]"
    )
    closing = f"[attached context from session {source.session_id}, commit {source.id}: end]"
    items = [
        _marker(call, commit_id, OPEN, opening, turn, locked=locked),
        *body,
        _marker(call, commit_id, CLOSE, closing, turn, locked=locked),
    ]
    return [item_rendering.counted(item, tokenizer) for item in items], frozenset(expanded)
