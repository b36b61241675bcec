"""A framework adapter reopening a stored session reads its outline, not every record.

`LiveSession.open` rebuilds the keys the framework synced, the head after each and the tool
calls still waiting. It walked the branch node by node (a 100k-message session: every
record decoded, 6.5 s of CPU and 407 MB); it now reads each node's edges, status and
metadata in one statement (`NodeTable.outline`), on both backends.
"""

from __future__ import annotations

import pytest

from ctxrules.dag import Role
from ctxrules.engine import DefaultContextEngine
from ctxrules.importers.messages import Message, ToolRequest
from ctxrules.integrations.live import Entry, LiveSession
from ctxrules.store import open_store
from ctxrules.store.stored_graph import StoredGraph
from ctxrules.tokens import HeuristicCounter


def entries(turns: int) -> list[Entry]:
    """User messages, assistant replies with two tool calls, results; the last call open."""
    out: list[Entry] = []
    for n in range(turns):
        out.append(Entry(f"u{n}", Message(f"step {n}", Role.USER)))
        calls = (ToolRequest(f"c{n}a", "read", {"n": n}), ToolRequest(f"c{n}b", "grep", {}))
        out.append(Entry(f"a{n}", Message(f"reading {n}", Role.ASSISTANT, tool_calls=calls)))
        out.append(Entry(f"r{n}a", Message(f"text {n}", result_for=f"c{n}a")))
        if n < turns - 1:
            out.append(Entry(f"r{n}b", Message("", result_for=f"c{n}b", is_error=True)))
    return out


def state(live: LiveSession) -> tuple[list[str], list[str | None], dict[str, str]]:
    """What a reopened session must know: the keys, the heads, the waiting calls."""
    return list(live.keys), list(live.heads), dict(live.calls)


def test_the_outline_gives_what_the_walk_gave_reading_no_record(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys, heads and waiting calls equal the writer's; no node is read whole."""
    engine = DefaultContextEngine(tokenizer=HeuristicCounter())
    with open_store(store_url).unwrap() as store:
        live = LiveSession.open("s", store, engine).unwrap()
        live.sync(entries(12)).unwrap()
        live.save().unwrap()
        written = state(live)
    reads: list[str] = []
    for name in ("node", "every_node", "edges"):
        real = getattr(StoredGraph, name)

        def counted(
            self: StoredGraph, *args: object, _real: object = real, _n: str = name
        ) -> object:
            reads.append(_n)
            return _real(self, *args)  # type: ignore[operator]

        monkeypatch.setattr(StoredGraph, name, counted)
    with open_store(store_url).unwrap() as store:
        again = LiveSession.open("s", store, DefaultContextEngine(tokenizer=HeuristicCounter()))
        assert state(again.unwrap()) == written
    assert reads == []
    assert written[2] == {"c11b": written[2]["c11b"]}  # the one call left open
