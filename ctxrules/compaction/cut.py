"""Where to cut: the oldest items fold into a summary, a tail of recent ones stays (reference 001 §4.2)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import attrs

from ctxrules.commit import ContextItem
from ctxrules.commit.attach import CLOSE as ATTACH_CLOSE
from ctxrules.commit.attach import OPEN as ATTACH_OPEN
from ctxrules.commit.attach import attach_blocks
from ctxrules.dag import Role
from ctxrules.tokens.budget import input_budget_for

__all__ = [
    "ATTACH_CLOSE",
    "ATTACH_OPEN",
    "CutParams",
    "ahead_keep",
    "attach_blocks",
    "find_cut_index",
    "fold_bounds",
    "has_text",
    "inside_blocks",
    "keep_tokens",
]


def _non_negative(_: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if value < 0:
        msg = f"{attribute.name}={value} must be >= 0"
        raise ValueError(msg)


@attrs.frozen
class CutParams:
    """The knobs of `find_cut_index`, with the defaults and origins of reference 001 §4.

    ``keep_ratio`` of the window is kept (clamped to ``keep_min_tokens``..``keep_max_tokens``,
    Claude Code), but never more than the window less ``min(min_prompt_budget,
    min_prompt_ratio * window)`` (OpenClaw's small-window cap). The tail also holds at least
    ``keep_min_messages`` text messages (Claude Code) and ``protect_last_n`` items; the first
    ``protect_first_n`` items never fold (Hermes). ``keep_recent_tokens`` replaces the
    ratio, clamp and cap with one fixed number (the manual ``/compact N``). The tail is also
    never more than ``max_budget_share`` of the input budget the compaction serves, so that a
    small window still has something to fold; at a window whose input budget is under
    ``scale_below`` tokens that share shrinks in proportion (a quarter at 16k), so that a fold
    leaves room for more than a few turns before the next. The newest ``keep_used_reads``
    file reads the assistant used, already tightened to a stub or a cut, stay out of the
    fold at a window whose input budget is 16,000 tokens or more (see
    `ctxrules.compaction.plan.used_reads`).
    """

    keep_ratio: float = attrs.field(default=0.10, validator=_non_negative)
    keep_min_tokens: int = attrs.field(default=8_000, validator=_non_negative)
    keep_max_tokens: int = attrs.field(default=40_000, validator=_non_negative)
    keep_min_messages: int = attrs.field(default=5, validator=_non_negative)
    protect_first_n: int = attrs.field(default=3, validator=_non_negative)
    protect_last_n: int = attrs.field(default=20, validator=_non_negative)
    min_prompt_budget: int = attrs.field(default=8_000, validator=_non_negative)
    min_prompt_ratio: float = attrs.field(default=0.25, validator=_non_negative)
    keep_recent_tokens: int | None = None
    max_budget_share: float = attrs.field(default=0.5, validator=_non_negative)
    scale_below: int = attrs.field(default=16_000, validator=_non_negative)
    keep_used_reads: int = attrs.field(default=2, validator=_non_negative)

    def __attrs_post_init__(self) -> None:
        if self.keep_min_tokens > self.keep_max_tokens:
            msg = (
                f"keep_min_tokens={self.keep_min_tokens} > keep_max_tokens={self.keep_max_tokens};"
                " the clamp needs min <= max"
            )
            raise ValueError(msg)
        if self.keep_recent_tokens is not None and self.keep_recent_tokens < 0:
            msg = f"keep_recent_tokens={self.keep_recent_tokens} must be None or >= 0"
            raise ValueError(msg)


def keep_tokens(window: int, params: CutParams = CutParams(), budget: int | None = None) -> int:
    """Steps 1 and 2: the tail's token target for this window (or ``keep_recent_tokens``).

    ``budget`` is what the history may use (default: the window less its output reserve);
    the tail keeps at most ``max_budget_share`` of it, so the cut fits the budget it serves.

    >>> [keep_tokens(w) for w in (8_000, 16_000, 32_000, 200_000, 1_000_000)]
    [500, 2000, 8000, 20000, 40000]
    >>> keep_tokens(200_000, budget=10_000)
    5000
    """
    if params.keep_recent_tokens is not None:
        return params.keep_recent_tokens
    desired = min(max(window * params.keep_ratio, params.keep_min_tokens), params.keep_max_tokens)
    min_prompt = min(params.min_prompt_budget, window * params.min_prompt_ratio)
    return max(math.floor(min(desired, window - min_prompt, _tail_cap(window, params, budget))), 0)


def _tail_cap(window: int, params: CutParams, budget: int | None) -> float:
    """The most the kept tail may hold: ``max_budget_share`` of the budget served."""
    if params.keep_recent_tokens is not None:
        return math.inf
    room = input_budget_for(window) if budget is None else budget
    full = input_budget_for(window)
    scale = min(full / params.scale_below, 1.0) if params.scale_below and full > 0 else 1.0
    return room * params.max_budget_share * scale


def has_text(item: ContextItem) -> bool:
    """Whether the item is a text-block message: a non-tool item with visible, non-blank text."""
    return item.visible and not item.is_tool and bool(item.rendered.strip())


def inside_blocks(items: Sequence[ContextItem]) -> frozenset[int]:
    """Positions strictly inside an attached block, where no cut may fall."""
    return frozenset(p for start, end in attach_blocks(items) for p in range(start + 1, end + 1))


def _snap(items: Sequence[ContextItem], cut: int, first: int, barred: frozenset[int]) -> int:
    """Step 6: the first user item at or after ``cut``, else the first agent step after it.

    With neither, the last user item or agent step before ``cut``; else ``first``.
    """

    def starts(role: Role) -> Iterator[int]:
        return (p for p in range(cut, len(items)) if items[p].role is role and p not in barred)

    # The seed walks forward to a user message and, in a long agent turn with none left,
    # would run off the end. An assistant item starts a step whose tool items follow it,
    # so the tail still begins at a turn boundary and no call is parted from its result.
    user = next(starts(Role.USER), None)
    if user is not None:
        return user
    step = next(starts(Role.ASSISTANT), None)
    if step is not None:
        return step
    # The cut fell among the results of the last step (one result over the tail's cap, at a
    # small window): the tail is that whole step, and everything before it may still fold.
    boundary = (Role.USER, Role.ASSISTANT)
    back = range(min(cut, len(items) - 1), first, -1)
    return next((p for p in back if items[p].role in boundary and p not in barred), first)


def find_cut_index(
    items: Sequence[ContextItem],
    window: int,
    params: CutParams = CutParams(),
    budget: int | None = None,
    *,
    ahead: int = 0,
) -> int:
    """The index of the first item kept: ``items[first:cut]`` may fold, ``items[cut:]`` stays.

    ``items`` is the rendered view (the visible items, in order); ``first`` is
    ``protect_first_n``. The cut is at a user item (at an assistant item when no user item
    follows), never strictly inside an attached block, and ``first`` when nothing folds.
    ``ahead`` is how many tokens the history will grow by before the fold lands (a summary
    written in the background): the tail target is that much smaller, but never under half.

    >>> turns = [ContextItem(f"n{i}", "user" if i % 2 == 0 else "assistant", rendered="x", tokens=1_000)
    ...          for i in range(60)]
    >>> find_cut_index(turns, 200_000)
    40
    >>> find_cut_index(turns, 200_000, CutParams(protect_last_n=0))
    40
    >>> find_cut_index(turns, 32_000, CutParams(protect_last_n=0))
    52
    """
    count = len(items)
    first = min(params.protect_first_n, count)
    full = keep_tokens(window, params, budget)
    keep = ahead_keep(full, ahead)
    # The items protected at the end shrink by the same share: they will be joined by others.
    last_n = math.ceil(params.protect_last_n * keep / full) if full else params.protect_last_n
    cap = _tail_cap(window, params, budget)
    cut = first
    tail_tokens = tail_texts = 0
    for index in range(count - 1, first - 1, -1):
        if tail_tokens + items[index].tokens > cap:
            # The message minimum never outweighs the budget: a tail over it folds nothing.
            cut = max(index + 1, first)
            break
        tail_tokens += items[index].tokens
        tail_texts += has_text(items[index])
        if tail_tokens >= keep and tail_texts >= params.keep_min_messages:
            cut = index
            break
    protected = max(count - last_n, first)
    if protected < cut and sum(item.tokens for item in items[protected:]) <= cap:
        cut = protected
    if cut == first:
        # The whole view fits the tail (or must stay): snapping forward would fold some of it.
        return first
    return _snap(items, cut, first, inside_blocks(items))


def ahead_keep(keep: int, ahead: int) -> int:
    """The tail target of a fold that lands after ``ahead`` more tokens: smaller, down to half.

    The tail then holds about ``keep`` tokens when the fold lands, as a blocking fold would.

    >>> ahead_keep(8_000, 0), ahead_keep(8_000, 1_600), ahead_keep(8_000, 20_000)
    (8000, 6400, 4000)
    """
    return max(keep - max(ahead, 0), keep // 2)


def fold_bounds(
    items: Sequence[ContextItem],
    window: int,
    params: CutParams = CutParams(),
    budget: int | None = None,
    *,
    ahead: int = 0,
) -> tuple[int, int]:
    """``(start, cut)``: the run of the view that may fold, both ends outside attached blocks.

    >>> fold_bounds([ContextItem("a", "user", rendered="hi", tokens=9)] * 2, 8_000)
    (2, 2)
    """
    cut = find_cut_index(items, window, params, budget, ahead=ahead)
    start = min(params.protect_first_n, len(items))
    for open_, close in attach_blocks(items):
        if open_ < start <= close:
            # The protected head reaches into a block: fold none of it.
            start = close + 1
    return start, max(start, cut)
