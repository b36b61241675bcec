"""Commit benchmarks: one new turn generated, the default pipeline alone, and rendering."""

from __future__ import annotations

from typing import Any

import attrs

from ctxrules.generation import generate_commit
from ctxrules.generation.generate import item_for
from ctxrules.render import counted, render_commit
from ctxrules.rules import Pipeline


def test_generate_one_turn(benchmark: Any, history: Any) -> None:
    """Generation alone (no rules): the new turn's items built, counted and appended."""
    benchmark.extra_info.update(kind="generate", size=history.size)
    child = benchmark(
        lambda: generate_commit(
            history.ruled, history.graph, "a", Pipeline(), history.facts
        ).unwrap()
    )
    assert len(child.items) == len(history.ruled.items) + 3


def test_default_pipeline_one_turn(
    benchmark: Any, history: Any, default_pipeline: Any, ruler: Any
) -> None:
    """The default pipeline's run over a commit that has just grown by one turn."""
    turn = history.ruled.next_turn()
    graph = history.graph
    new = [graph.nodes["u"], graph.nodes["a"], graph.nodes["t"]]
    grown = history.ruled.append_items(counted(item_for(call, turn), ruler) for call in new)
    facts = attrs.evolve(history.facts, head_turn=turn + 1)
    benchmark.extra_info.update(kind="pipeline", size=history.size)
    ruled = benchmark(default_pipeline.run, grown, facts)
    assert len(ruled.items) == len(grown.items)


def test_render_commit(benchmark: Any, history: Any) -> None:
    """The one O(n) step: a commit rendered to provider-neutral messages."""
    benchmark.extra_info.update(kind="render", size=history.size)
    messages = benchmark(render_commit, history.ruled)
    assert len(messages) >= len(history.ruled.items)
