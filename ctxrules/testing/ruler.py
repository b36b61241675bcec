"""The ruler `ctxrules check` counts with: the heuristic, its counts remembered."""

from __future__ import annotations

from ctxrules.tokens import HeuristicCounter
from ctxrules.tokens.memo import MemoCounter

#: The ruler `ctxrules check` counts with. A check counts the same texts again and again
#: (every output of every rule, rendered), so each repeat is a lookup; generated texts are
#: short and many, hence the larger bounds.
CHECK_RULER = MemoCounter(HeuristicCounter(), entries=200_000, characters=50_000_000)
