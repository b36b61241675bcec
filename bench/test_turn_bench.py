"""Per-turn cost beside the peers, on the same history, with the same ruler and budget.

A ctxrules turn is `generate_commit` for one new turn (the default pipeline included),
with and without `render_commit`; the peers' turn is one `trim_messages` call on the full
history, or counting every message of it again (the naive loop).
"""

from __future__ import annotations

from typing import Any

import pytest

from ctxrules.generation import generate_commit
from ctxrules.render import count_messages, render_commit

#: Rounds for the peers, whose calls take up to tens of seconds at 100k items.
PEER_ROUNDS = {1_000: 5, 10_000: 3, 100_000: 1}


def test_turn_core(benchmark: Any, history: Any, default_pipeline: Any) -> None:
    """One new turn: its items generated and counted, then the default pipeline run."""
    benchmark.extra_info.update(kind="turn_core", size=history.size)
    child = benchmark(
        lambda: generate_commit(
            history.ruled, history.graph, "a", default_pipeline, history.facts
        ).unwrap()
    )
    assert len(child.items) == len(history.ruled.items) + 3


def test_turn_with_render(benchmark: Any, history: Any, default_pipeline: Any) -> None:
    """One new turn as a user pays for it: the commit generated, then rendered to messages."""
    benchmark.extra_info.update(kind="turn_render", size=history.size)

    def turn() -> tuple[Any, ...]:
        child = generate_commit(
            history.ruled, history.graph, "a", default_pipeline, history.facts
        ).unwrap()
        return render_commit(child)

    messages = benchmark(turn)
    assert len(messages) >= len(history.ruled.items)


def test_peer_trim_messages(benchmark: Any, history: Any, peer: Any) -> None:
    """LangChain's trim_messages (strategy last) on the full history, once per turn."""
    messages = peer.messages(history)
    benchmark.extra_info.update(kind="trim_messages", size=history.size, messages=len(messages))
    kept = benchmark.pedantic(
        peer.trim, args=(messages,), rounds=PEER_ROUNDS[history.size], iterations=1
    )
    assert 0 < len(kept) <= len(messages)


def test_peer_naive_recount(benchmark: Any, history: Any, ruler: Any) -> None:
    """The naive loop: every message of the full history counted again, once per turn."""
    benchmark.extra_info.update(kind="naive_recount", size=history.size)
    total = benchmark.pedantic(
        count_messages,
        args=(history.messages, ruler),
        rounds=PEER_ROUNDS[history.size],
        iterations=1,
    )
    assert total == history.raw.total_tokens


@pytest.mark.parametrize("size", [1_000], ids=["1k"])
def test_peer_counts_like_ctxrules(history: Any, peer: Any, ruler: Any) -> None:
    """The peer's counter gives the same total as ctxrules' ruler on the same messages."""
    assert peer.count(peer.messages(history)) == count_messages(history.messages, ruler)
