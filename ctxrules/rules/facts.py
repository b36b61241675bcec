"""`Facts`: what a rule may know besides the commit it transforms."""

from __future__ import annotations

from collections.abc import Collection

import attrs
from pyrsistent import pset

from ctxrules.tokens import Tokenizer, default_tokenizer


@attrs.define
class WorkMeter:
    """Counts items visited by rules; pass one in `Facts` to measure a turn's work exactly.

    Mutable on purpose and only ever written by `ctxrules.rules.scan`; it exists so tests
    and benchmarks can count work instead of timing it.
    """

    items_visited: int = 0


@attrs.frozen
class Facts:
    """The clock, the window, the tokenizer and the reference map, passed in from outside.

    ``now`` is in seconds (the core never reads a clock); ``cited`` holds the ids of nodes
    that a later message refers to; ``head_turn`` is the head's assistant-turn index.
    """

    now: float = 0.0
    context_window: int = 200_000
    budget: int | None = None
    tokenizer: Tokenizer = attrs.field(factory=default_tokenizer)
    cited: Collection[str] = attrs.field(factory=pset)
    head_turn: int = 0
    meter: WorkMeter | None = attrs.field(default=None, eq=False)
