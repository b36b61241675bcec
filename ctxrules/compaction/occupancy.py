"""The occupancy ruler: one record of how full the window is, from the rendered view (reference 002).

Compaction does not move the head, so "same head" does not mean "same view": a generation
counter, bumped by every compaction that lands, decides whether a provider's measurement
still describes what the model will read.
"""

from __future__ import annotations

import enum

import attrs

from ctxrules.commit import ContextCommit
from ctxrules.compaction.outcome import CompactResult


class Basis(enum.StrEnum):
    """Where ``total_used`` comes from."""

    MEASURED = "measured"
    ESTIMATED = "estimated"


@attrs.frozen
class Measurement:
    """Prompt tokens the provider reported for a request, including cache reads.

    Anthropic reports cache reads and writes apart from ``input_tokens``: add them in.
    ``head_node_id`` and ``generation`` say which view the request was rendered from.
    """

    head_node_id: str | None
    generation: int
    prompt_tokens: int


@attrs.frozen
class Occupancy:
    """What the ring, the panel and the compaction report all show.

    ``estimated`` is the one ruler's count of the rendered view (plus fixed tokens);
    ``total_used`` is the measurement when it still applies, else the estimate;
    ``calibration`` is ``measured / estimated`` while the measurement applies, else None.
    """

    window: int
    total_used: int
    basis: Basis
    estimated: int
    calibration: float | None
    generation: int

    @property
    def used_pct(self) -> float:
        """``total_used`` as a share of the window."""
        return self.total_used / self.window


def estimate_total_used(commit: ContextCommit, fixed_tokens: int = 0) -> int:
    """The rendered view's tokens (``total_tokens``, invariant 10) plus system and tool schemas.

    >>> from ctxrules.commit import ContextItem
    >>> estimate_total_used(ContextCommit("s").append_items([ContextItem("n", "user", tokens=7)]), 100)
    107
    """
    return commit.total_tokens + fixed_tokens


def occupancy(
    commit: ContextCommit,
    window: int,
    *,
    generation: int,
    measurement: Measurement | None = None,
    fixed_tokens: int = 0,
) -> Occupancy:
    """The record for ``commit``; a measurement counts only for the same head and generation.

    >>> from ctxrules.commit import ContextItem
    >>> c = ContextCommit("s", head_node_id="n").append_items([ContextItem("n", "user", tokens=90)])
    >>> occupancy(c, 1_000, generation=0, measurement=Measurement("n", 0, 99)).calibration
    1.1
    >>> occupancy(c, 1_000, generation=1, measurement=Measurement("n", 0, 99)).basis.value
    'estimated'
    """
    estimated = estimate_total_used(commit, fixed_tokens)
    current = (
        measurement is not None
        and measurement.head_node_id == commit.head_node_id
        and measurement.generation == generation
    )
    if measurement is not None and current:
        calibration = measurement.prompt_tokens / estimated if estimated else None
        return Occupancy(
            window, measurement.prompt_tokens, Basis.MEASURED, estimated, calibration, generation
        )
    return Occupancy(window, estimated, Basis.ESTIMATED, estimated, None, generation)


def next_generation(generation: int, result: CompactResult) -> int:
    """The generation after a compaction: one more when a summary landed, even at the same head."""
    return generation + 1 if result.applied else generation
