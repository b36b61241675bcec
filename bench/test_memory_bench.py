"""Memory: every commit of a long session kept, beside the last commit alone.

Commits share structure: a turn's commit shares its parent's items and rule bookmarks and
adds what is new. The session is the benchmarks' synthetic one, grown turn by turn through
the default pipeline as `generate_commit` runs it (``Pipeline.step``: its batching policy
decides when tightening lands, by the time and turn each commit records); memory is what
``tracemalloc`` sees allocated and still held.
"""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import attrs
import pytest

from ctxrules.commit import ContextCommit
from ctxrules.rules import Facts


def held_bytes(bench: Any, turns: int, pipeline: Any) -> tuple[int, int]:
    """Bytes held by all the commits of a ``turns``-turn session, then by its last commit."""
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        commit, kept = ContextCommit("bench"), []
        for turn in range(turns):
            grown = commit.begin_generation().append_items(bench.turn_items(turn))
            now = (turn + 1) * bench.SECONDS_PER_TURN
            facts = Facts(now=now, head_turn=turn + 1, tokenizer=bench.RULER)
            # The header generate_commit gives a commit: batching reads its time and turn.
            commit = attrs.evolve(
                pipeline.step(commit, grown, facts),
                parent_ids=(commit.id,),
                created_at=now,
                head_node_id=f"a{turn}",
                rules_version=pipeline.version,
            )
            commit.id  # noqa: B018 - every commit is addressed, as the engine addresses them
            kept.append(commit)
        everything = tracemalloc.get_traced_memory()[0] - start
        kept.clear()
        gc.collect()
        last = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    return everything, last


@pytest.mark.parametrize(
    "turns",
    [1_000, pytest.param(10_000, marks=pytest.mark.bench_large)],
    ids=["1k-turns", "10k-turns"],
)
def test_all_commits_memory(
    benchmark: Any, bench_module: Any, default_pipeline: Any, turns: int
) -> None:
    """All commits of the session over the last one alone, in bytes held."""
    everything, last = benchmark.pedantic(
        held_bytes, args=(bench_module, turns, default_pipeline), rounds=1, iterations=1
    )
    ratio = everything / last
    benchmark.extra_info.update(
        kind="commit_memory", size=turns, all_bytes=everything, last_bytes=last, ratio=ratio
    )
    assert everything >= last > 0
