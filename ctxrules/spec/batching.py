"""The spec's ``[batching]`` table: when pending tightening lands (see `Batching`)."""

from __future__ import annotations

from typing import Any

from returns.result import Failure, Result, Success

from ctxrules.rules.batching import Batching
from ctxrules.rules.params import Param, check_params, resolve
from ctxrules.spec.errors import Fault, Location, SpecError, describe

_DEFAULTS = Batching()

BATCHING_PARAMS = (
    Param(
        "every_turns",
        "int",
        _DEFAULTS.every_turns,
        "assistant turns between two batch points",
        minimum=1,
    ),
    Param(
        "budget_share",
        "float",
        _DEFAULTS.budget_share,
        "share of the input budget whose crossing is a batch point (0: off)",
        minimum=0,
        maximum=1,
    ),
    Param(
        "cold_after_seconds",
        "float",
        _DEFAULTS.cold_after_seconds,
        "a gap this long means the provider's cache is cold: a batch point (0: off)",
        minimum=0,
    ),
    Param(
        "min_history_tokens",
        "int",
        _DEFAULTS.min_history_tokens,
        "no batch point (no tightening of sent items) while the history is smaller",
        minimum=0,
    ),
    Param(
        "scale_below",
        "int",
        _DEFAULTS.scale_below,
        "input budget in tokens under which a turn or budget point lands only if it frees a quarter"
        " of the budget (0: always)",
        minimum=0,
    ),
    Param(
        "min_gain_of_rewrite",
        "float",
        _DEFAULTS.min_gain_of_rewrite,
        "at a window of scale_below and more, a turn or budget point lands only if the tokens it"
        " frees are at least this share of the tokens it rewrites (0: always)",
        minimum=0,
    ),
)


def parse_batching(
    table: object, where: Location
) -> Result[tuple[Batching, dict[str, object]], tuple[SpecError, ...]]:
    """The policy a ``[batching]`` table declares and its normalised form for the version.

    >>> from ctxrules.spec.errors import Location
    >>> parse_batching({"every_turns": 4}, Location("s.toml", "batching")).unwrap()[0].every_turns
    4
    """
    if not isinstance(table, dict):
        return Failure(
            (where.error("a table of batching settings", describe(table), "wrong_type"),)
        )
    problems = check_params(BATCHING_PARAMS, table)
    if problems:
        errors = []
        for problem in problems:
            fault: Fault = "unknown_name" if problem.key not in _names() else "out_of_bounds"
            if problem.key in table and problem.found != repr(table[problem.key]):
                fault = "wrong_type"
            errors.append(
                where.key(problem.key).error(
                    problem.expected, _found(table, problem.key), fault, problem.suggestion
                )
            )
        return Failure(tuple(errors))
    values: dict[str, Any] = resolve(BATCHING_PARAMS, table)
    batching = Batching(
        every_turns=int(values["every_turns"]),
        budget_share=float(values["budget_share"]),
        cold_after_seconds=float(values["cold_after_seconds"]),
        min_history_tokens=int(values["min_history_tokens"]),
        scale_below=int(values["scale_below"]),
        min_gain_of_rewrite=float(values["min_gain_of_rewrite"]),
    )
    plain: dict[str, object] = {
        "every_turns": batching.every_turns,
        "budget_share": batching.budget_share,
        "cold_after_seconds": batching.cold_after_seconds,
        "min_history_tokens": batching.min_history_tokens,
    }
    if batching.scale_below:
        # Only a spec that weighs its landings hashes it: every earlier spec keeps its version.
        plain["scale_below"] = batching.scale_below
    if batching.min_gain_of_rewrite:
        plain["min_gain_of_rewrite"] = batching.min_gain_of_rewrite
    return Success((batching, plain))


def _names() -> tuple[str, ...]:
    return tuple(p.name for p in BATCHING_PARAMS)


def _found(table: dict[str, Any], key: str) -> str:
    return describe(table[key]) if key in _names() else repr(key)
