"""Compaction benchmark: where to cut a long history, at a 200k-token window."""

from __future__ import annotations

from typing import Any

from ctxrules.compaction import find_cut_index


def test_find_cut_index(benchmark: Any, history: Any) -> None:
    """The cut over the rendered view (the visible items), as compaction calls it."""
    view = [item for item in history.ruled.items if item.visible]
    benchmark.extra_info.update(kind="find_cut_index", size=history.size)
    cut = benchmark(find_cut_index, view, 200_000)
    assert 0 < cut < len(view)
