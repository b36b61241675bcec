"""A turn with a store writes what is new: the same rows and bytes at 300 and at 3,000 messages.

Counted, not timed: the commit objects each request stores (`Keeper.last_written`) and the
statements each turn runs against the SQLite file (its trace callback). Before commits
were stored as shared objects, a turn wrote every item of the session again.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ctxrules.engine.context import Context
from ctxrules.store import SqliteStore
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter


def _filler(count: int) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = []
    for turn in range(count // 3):
        call = {"id": f"b{turn}", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
        messages += [
            {"role": "user", "content": f"task {turn}: " + "word " * 20},
            {"role": "assistant", "content": f"ok {turn}", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"b{turn}", "content": f"file_{turn}.py\n" * 30},
        ]
    return messages


def _response(turn: int) -> dict[str, object]:
    return openai_response(turn, f"step {turn}", [(f"c{turn}", "ls", {})], (3_000, 0))


def _writes_per_turn(path: Path, size: int) -> tuple[list[int], list[int], list[int]]:
    """Object rows, object bytes and statements of each of 6 turns after ``size`` messages."""
    store = SqliteStore.open(path, synchronous="NORMAL").unwrap()
    ctx = Context(
        model="gpt-4o",
        window=1_000_000,
        store=store,
        session="w",
        tokenizer=HeuristicCounter(),
        clock=lambda: 5.0,
    )
    ctx.add(*_filler(size))
    ctx.openai()
    statements: list[str] = []
    conn = store._conn  # the one connection every write goes through
    assert isinstance(conn, sqlite3.Connection)
    conn.set_trace_callback(statements.append)
    rows, sizes, counts = [], [], []
    for turn in range(6):
        statements.clear()
        ctx.add({"role": "user", "content": f"next {turn}"})
        reply = ctx.record(_response(turn))
        ctx.add_tool_result(reply.tool_calls[0].id, f"out {turn}\n" * 40)
        ctx.openai()
        written = ctx._keeper.last_written if ctx._keeper else None
        assert written is not None
        rows.append(written.object_rows)
        sizes.append(written.object_bytes)
        counts.append(
            sum(
                1
                for s in statements
                if s.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE", "REPLACE"))
            )
        )
    conn.set_trace_callback(None)
    store.close()
    return rows, sizes, counts


def test_a_turn_writes_the_same_at_300_and_at_3000_messages(tmp_path: Path) -> None:
    """Invariant 2 (commits content-addressed) lets a turn store only the objects it added."""
    small = _writes_per_turn(tmp_path / "small.sqlite", 300)
    large = _writes_per_turn(tmp_path / "large.sqlite", 3_000)
    # Rows: a turn's new items, the chunks they land in and the path to the root.
    assert max(large[0]) <= max(small[0]) + 2, (small[0], large[0])
    # Bytes: the same few items; a tree 20x wider adds one level of 64 digests at most.
    assert sum(large[1]) <= sum(small[1]) * 1.5 + 6 * 70 * 64, (small[1], large[1])
    # Statements that write: the same per turn, whatever the session's length.
    assert max(large[2]) <= max(small[2]) + 2, (small[2], large[2])
    # And far below what storing the commit whole would write (3,000 items of ~300 bytes).
    assert max(large[1]) < 3_000 * 300 // 20
