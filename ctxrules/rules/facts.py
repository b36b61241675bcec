"""`Facts`: what a rule may know besides the commit it transforms."""

from __future__ import annotations

import attrs
from pyrsistent import PSet, pset

from ctxrules.tokens import Tokenizer, default_tokenizer


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
    cited: PSet[str] = attrs.field(factory=pset)
    head_turn: int = 0
