"""The built-in rules with their parameters, defaults and bounds (reference 001 §3, 000 §3 and §5)."""

from __future__ import annotations

from ctxrules.rules.builtin import BuiltinRule
from ctxrules.rules.cap import cap_tool_result
from ctxrules.rules.gates import gate_tool_results
from ctxrules.rules.idle import IDLE_PLACEHOLDER, clear_idle
from ctxrules.rules.params import Param
from ctxrules.rules.tool_aging import PROTECTED_TOOLS, age_tool_results

_HANDLES = Param(
    "handles",
    "bool",
    True,  # noqa: FBT003 - a Param default, not a flag argument
    "name the recall handle in the tightened text (invariant 16 needs it)",
)
_SCALE = Param(
    "scale_below",
    "int",
    0,
    "input budget in tokens under which the sizes shrink in proportion (0: fixed sizes)",
    minimum=0,
)
_PROTECTED = Param(
    "protected_tools",
    "str_list",
    list(PROTECTED_TOOLS),
    "tools whose results are never aged or cleared",
)

BUILTIN_RULES: tuple[BuiltinRule, ...] = (
    BuiltinRule(
        "cap_tool_result",
        "Any tool result over max_chars keeps its head and tail, inside the tail window too.",
        (
            Param(
                "max_chars", "int", 4000, "longest result kept whole, in characters", minimum=200
            ),
            Param(
                "tail_share",
                "float",
                0.33,
                "share of the kept characters taken from the end",
                minimum=0,
                maximum=1,
            ),
            Param(
                "max_args_chars",
                "int",
                0,
                "longest call arguments kept whole, in characters (0: not capped)",
                minimum=0,
            ),
            _HANDLES,
            Param(
                "hint_chars",
                "int",
                0,
                "characters of the kept room that name the cut middle's most distinctive names",
                minimum=0,
            ),
            _SCALE,
            Param(
                "read_names_share",
                "float",
                0.0,
                "share of a file read's kept room that names the cut middle (0: cut as any result)",
                minimum=0,
                maximum=1,
            ),
        ),
        cap_tool_result,
    ),
    BuiltinRule(
        "age_tool_results",
        "Tool results older than the last tail_turns assistant turns become one-line stubs.",
        (
            Param(
                "tail_turns", "int", 3, "assistant turns whose tool results stay whole", minimum=0
            ),
            Param(
                "max_args_chars",
                "int",
                200,
                "characters of an aged call's arguments kept",
                minimum=0,
            ),
            Param(
                "stub_head_chars",
                "int",
                80,
                "characters of the result's head in the stub",
                minimum=0,
            ),
            Param(
                "stub_tail_chars",
                "int",
                40,
                "characters of the result's tail in the stub",
                minimum=0,
            ),
            _PROTECTED,
            _HANDLES,
            Param(
                "stub_hint_chars",
                "int",
                0,
                "characters of the result's most distinctive names kept in the stub (0: none)",
                minimum=0,
            ),
            Param(
                "cited_tail_turns",
                "int",
                0,
                "assistant turns a result that a later message cites stays whole (0: tail_turns)",
                minimum=0,
            ),
            Param(
                "used_tail_turns",
                "int",
                0,
                "a result whose names the assistant wrote in this many last turns stays whole (0: off)",
                minimum=0,
            ),
            Param(
                "stub_hints_unseen",
                "bool",
                False,  # noqa: FBT003 - a Param default, not a flag argument
                "a stub's names leave out those its call and the user's and assistant's messages show",
            ),
            Param(
                "used_hint_chars",
                "int",
                0,
                "characters of names in the stub of a result the assistant used after it arrived",
                minimum=0,
            ),
            _SCALE,
        ),
        age_tool_results,
    ),
    BuiltinRule(
        "gate_tool_results",
        "Clear a large tool result that is old in turns and in time and that no later message cites.",
        (
            Param("min_turns", "int", 4, "assistant turns since the result", minimum=0),
            Param("min_seconds", "float", 60.0, "seconds since the result was made", minimum=0),
            Param("min_tokens", "int", 800, "smallest result worth clearing, in tokens", minimum=0),
            Param(
                "protect_first_n",
                "int",
                2,
                "first items never cleared (the task statement)",
                minimum=0,
            ),
            _PROTECTED,
            _HANDLES,
        ),
        gate_tool_results,
    ),
    BuiltinRule(
        "clear_idle",
        "Tool results aged for idle_seconds become one fixed, cache-stable placeholder.",
        (
            Param(
                "idle_seconds",
                "float",
                3600.0,
                "seconds an aged result waits before clearing",
                minimum=0,
            ),
            Param("placeholder", "str", IDLE_PLACEHOLDER, "the fixed text a cleared result shows"),
            _PROTECTED,
            _HANDLES,
        ),
        clear_idle,
    ),
)
