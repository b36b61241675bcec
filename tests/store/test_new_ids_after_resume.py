"""A resumed session stops reading the store to learn that a new node's id is free.

Counted, not timed: each node appended asks the graph whether its id is taken; on a
resumed graph a stored id could be anywhere in the history, so it was a read of its own
for every new node (three a turn). After `IDS_AFTER_MISSES` such questions the stored ids
are read once and answer the rest.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_round_trips_per_turn import _turn

from ctxrules.engine.context import Context
from ctxrules.store import SqliteStore
from ctxrules.store.stored_graph import IDS_AFTER_MISSES
from ctxrules.tokens import HeuristicCounter


def _context(store: SqliteStore) -> Context:
    return Context(
        model="gpt-4o",
        window=200_000,
        store=store,
        session="r",
        tokenizer=HeuristicCounter(),
        clock=lambda: 5.0,
    )


def test_new_nodes_stop_costing_reads_once_the_ids_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Turns after the threshold read no node; the ids are read once (the old code: 3 reads a turn)."""
    path = tmp_path / "r.sqlite"
    with SqliteStore.open(path).unwrap() as store:
        ctx = _context(store)
        ctx.add(*({"role": "user", "content": f"task {n}"} for n in range(40)))
        ctx.openai()
        ctx.close()
    operations: Counter[str] = Counter()
    transaction = SqliteStore._transaction

    def counted(self: SqliteStore, operation: str, work: Any, **kwargs: Any) -> Any:
        operations[operation] += 1
        return transaction(self, operation, work, **kwargs)

    monkeypatch.setattr(SqliteStore, "_transaction", counted)
    with SqliteStore.open(path).unwrap() as store:
        ctx = _context(store)  # resumed: the graph reads nodes when first touched
        turns = -(-IDS_AFTER_MISSES // 3) + 1
        for turn in range(turns):
            _turn(ctx, turn, lambda _: None)
        before = operations["read_node"]
        for turn in range(turns, turns + 10):
            _turn(ctx, turn, lambda _: None)
        assert operations["read_node"] == before  # ten turns, thirty new nodes: no read
        assert operations["read_ids"] == 1
        assert before <= IDS_AFTER_MISSES + 3
        ctx.close()
