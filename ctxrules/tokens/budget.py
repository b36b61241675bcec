"""The four-way token budget: system, history, tools schema and output reserve (reference 001 §2.3)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence

import attrs

from ctxrules.tokens.protocol import Tokenizer

__all__ = [
    "DEFAULT_OUTPUT_RESERVE",
    "MAX_OUTPUT_SHARE",
    "MIN_OUTPUT_SHARE",
    "TOOL_OVERHEAD",
    "BudgetAllocation",
    "allocate",
    "input_budget_for",
    "output_reserve_for",
    "tools_schema_tokens",
]

#: Tokens kept for the model's answer unless the caller says otherwise (reference 001 §2.3).
DEFAULT_OUTPUT_RESERVE = 16_384
#: The reserve is never below this share of the window: a reserve too small truncates long answers.
MIN_OUTPUT_SHARE = 0.25
#: Nor above this share, so that a small window keeps half of itself for input (our guard:
#: the default 16384 would otherwise swallow an 8k window whole).
MAX_OUTPUT_SHARE = 0.5
#: Tokens each tool costs beyond its JSON schema, for the description framing (reference 001 §2.3).
TOOL_OVERHEAD = 5


def tools_schema_tokens(
    tools: Sequence[Mapping[str, object]], tokenizer: Tokenizer, *, per_tool: int = TOOL_OVERHEAD
) -> int:
    """Tokens of the tool schemas: each one's JSON text plus ``per_tool`` overhead.

    >>> from ctxrules.tokens import HeuristicCounter
    >>> tools_schema_tokens([{"name": "ls", "parameters": {}}], HeuristicCounter())
    14
    """
    return sum(tokenizer.count(json.dumps(tool, ensure_ascii=False)) + per_tool for tool in tools)


def _non_negative(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 0:
        msg = f"{attribute.name}={value} must be a non-negative number of tokens"
        raise ValueError(msg)


def _positive(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 1:
        msg = f"{attribute.name}={value} must be a positive number of tokens (the real window)"
        raise ValueError(msg)


@attrs.frozen
class BudgetAllocation:
    """How the window splits: what the input uses, and what is kept for the answer.

    >>> a = BudgetAllocation(200_000, system=3_000, history=120_000, tools_schema=2_000, output_reserve=50_000)
    >>> a.input_used, a.input_budget, round(a.input_used_pct, 3), a.headroom
    (125000, 150000, 0.833, 25000)
    """

    context_window: int = attrs.field(validator=_positive)
    system: int = attrs.field(default=0, validator=_non_negative)
    history: int = attrs.field(default=0, validator=_non_negative)
    tools_schema: int = attrs.field(default=0, validator=_non_negative)
    output_reserve: int = attrs.field(default=0, validator=_non_negative)

    @property
    def input_used(self) -> int:
        """System prompt, history and tool schemas together."""
        return self.system + self.history + self.tools_schema

    @property
    def input_budget(self) -> int:
        """What the input may use: the window less the output reserve."""
        return self.context_window - self.output_reserve

    @property
    def input_used_pct(self) -> float:
        """``input_used / input_budget``: the share the policy thresholds compare against."""
        return self.input_used / self.input_budget if self.input_budget > 0 else math.inf

    @property
    def headroom(self) -> int:
        """Tokens the input may still grow by; negative when it is over budget."""
        return self.input_budget - self.input_used


def output_reserve_for(
    context_window: int,
    requested: int = DEFAULT_OUTPUT_RESERVE,
    *,
    min_share: float = MIN_OUTPUT_SHARE,
    max_share: float = MAX_OUTPUT_SHARE,
) -> int:
    """The reserve: ``requested`` capped at ``max_share`` of the window, never below ``min_share``.

    >>> output_reserve_for(200_000), output_reserve_for(32_000), output_reserve_for(8_000)
    (50000, 16000, 4000)
    """
    if not 0 <= min_share <= max_share < 1:
        msg = f"min_share={min_share}, max_share={max_share}: need 0 <= min_share <= max_share < 1"
        raise ValueError(msg)
    if requested < 0:
        msg = f"output_reserve={requested} must be a non-negative number of tokens"
        raise ValueError(msg)
    capped = min(requested, math.floor(context_window * max_share))
    return max(capped, math.ceil(context_window * min_share))


def input_budget_for(context_window: int) -> int:
    """What the input may use of a window with the default output reserve.

    >>> input_budget_for(200_000), input_budget_for(32_000), input_budget_for(16_000)
    (150000, 16000, 8000)
    """
    return context_window - output_reserve_for(context_window)


def allocate(
    context_window: int,
    system: int,
    history: int,
    tools: int,
    *,
    output_reserve: int = DEFAULT_OUTPUT_RESERVE,
    min_output_share: float = MIN_OUTPUT_SHARE,
    max_output_share: float = MAX_OUTPUT_SHARE,
) -> BudgetAllocation:
    """Split the model's real window (never its max output) four ways.

    ``system`` and ``history`` are token counts from the one ruler (a commit's
    ``total_tokens`` is its history), ``tools`` the result of `tools_schema_tokens`.

    >>> a = allocate(200_000, 3_000, 120_000, 2_000)
    >>> a.output_reserve, a.input_budget, a.headroom
    (50000, 150000, 25000)
    """
    if context_window < 1:
        msg = f"context_window={context_window} must be the model's real window, a positive number"
        raise ValueError(msg)
    reserve = output_reserve_for(
        context_window, output_reserve, min_share=min_output_share, max_share=max_output_share
    )
    return BudgetAllocation(context_window, system, history, tools, reserve)
