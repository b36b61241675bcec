"""Strategies for rules: facts for a commit, parameters within bounds, and pipelines."""

from __future__ import annotations

from hypothesis import strategies as st
from pyrsistent import pset

from ctxrules.commit import ContextCommit
from ctxrules.rules import BuiltinRule, Facts, NamedRule, Param, Pipeline, builtins
from ctxrules.tokens import HeuristicCounter, Tokenizer

#: Context windows a rule may be given, from a small local model's to the largest.
WINDOWS = (8_000, 16_000, 32_000, 128_000, 200_000, 1_000_000)
#: Each window's budgets, built once: a strategy built anew is validated anew at every draw.
_BUDGETS = {window: st.none() | st.integers(window // 10, window) for window in WINDOWS}
_WINDOW_CHOICES = st.sampled_from(WINDOWS)


@st.composite
def windows(draw: st.DrawFn) -> tuple[int, int | None]:
    """A context window from 8k to 1M tokens, and no budget or one up to the window."""
    window = draw(_WINDOW_CHOICES, label="context window")
    budget = draw(_BUDGETS[window], label="budget")
    return window, budget


_WINDOWS = windows()


@st.composite
def facts_for(draw: st.DrawFn, commit: ContextCommit, tokenizer: Tokenizer | None = None) -> Facts:
    """Facts a rule might see with ``commit``: a clock, a window and budget, a head turn and citations.

    The head turn reaches a few turns past the commit's last item, so every item of a long
    history can be old enough for a rule's turn gates; the window runs from 8k to 1M.
    """
    last = max((item.turn for item in commit.items), default=0)
    # Positions, not a sampled_from of this commit's ids: one strategy for every commit.
    positions = (
        draw(st.sets(st.integers(0, len(commit.items) - 1), max_size=4)) if commit.items else set()
    )
    cited = {commit.items[p].source_node_id for p in positions}
    window, budget = draw(_WINDOWS)
    return Facts(
        now=draw(st.floats(0, 2e6)),
        context_window=window,
        budget=budget,
        head_turn=draw(st.integers(0, max(80, last + 6))),
        cited=pset(cited),
        tokenizer=tokenizer or HeuristicCounter(),
    )


def param_values(param: Param) -> st.SearchStrategy[object]:
    """Valid values of one parameter, within its bounds."""
    low = param.minimum if param.minimum is not None else 0
    high = param.maximum if param.maximum is not None else max(low * 4, 10_000)
    match param.kind:
        case "int":
            return st.integers(int(low), int(high))
        case "float":
            return st.floats(low, high)
        case "bool":
            return st.booleans()
        case "str":
            return st.text(max_size=40)
        case _:
            return st.lists(
                st.sampled_from(["grep", "read_file", "todo_list", "bash"]), max_size=3, unique=True
            )


@st.composite
def builtin_params(draw: st.DrawFn, rule: BuiltinRule) -> dict[str, object]:
    """A valid parameter set for ``rule``: each parameter either omitted or drawn in bounds."""
    return {p.name: draw(param_values(p)) for p in rule.params if draw(st.booleans())}


@st.composite
def pipelines(draw: st.DrawFn, max_rules: int = 5) -> Pipeline:
    """Pipelines of built-in rules in random order with random valid parameters."""
    registry = builtins()
    names = draw(st.lists(st.sampled_from(sorted(registry)), min_size=1, max_size=max_rules))
    rules = []
    for name in names:
        params = draw(builtin_params(registry[name]))
        rules.append(NamedRule(name, registry[name].build(params).unwrap()))
    return Pipeline(tuple(rules), version=f"random:{names}")
