"""A resumed session reads what its turns touch, and sends what an uninterrupted run sends.

The last commit's chunks and the graph's nodes are read on demand and the reference
tracker is kept per turn (issue 27); these tests run the same agent with and without a
restart and compare every request byte for byte, count what the resumed process read,
and check the kept tracker against one rebuilt from the whole history.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from types import ModuleType

import pytest

from ctxrules.commit.vector import CHUNK, LazyChunk
from ctxrules.engine.context import ConfigError, Context, StoreFailed
from ctxrules.store import SqliteStore, open_store
from ctxrules.store.objects import object_key
from ctxrules.store.packing import pack, unpack
from ctxrules.tokens import HeuristicCounter
from tests.module_files import load_file

AGENT = Path(__file__).parents[1] / "engine" / "restart_agent.py"
SESSION = "restart-demo"


def _agent() -> ModuleType:
    return load_file("restart_agent", AGENT)


def _turn(agent: ModuleType, ctx: Context, clock: list[float], turn: int) -> str:
    """One turn of the restart agent (request, reply, tool result); the request as JSON."""
    clock[0] = 1_000.0 + 600.0 * turn
    request = ctx.openai()
    ctx.record(agent._reply(turn, request))
    body = "\n".join(f"see src/mod{turn - 1}.py: def f{turn}_{i}(x): return {i}" for i in range(40))
    ctx.add({"role": "tool", "tool_call_id": f"call_{turn}", "content": body})
    return json.dumps(request, sort_keys=True)


def _context(store: str | None, clock: list[float]) -> Context:
    """The restart agent's `Context` with a window its 30 turns never fill: a commit of many chunks."""
    return Context(
        "default",
        model="gpt-4o",
        window=1_000_000,
        system="You are a careful coding agent.",
        store=store,
        session=SESSION,
        tokenizer=HeuristicCounter(),
        clock=lambda: clock[0],
    )


def _run(
    agent: ModuleType, store: str | None, clock: list[float], turns: range, *, small: bool = False
) -> list[str]:
    ctx = agent._context(store, clock) if small else _context(store, clock)
    try:
        if ctx.session.head is None:
            ctx.add({"role": "user", "content": "Read every module and summarise the package."})
        return [_turn(agent, ctx, clock, turn) for turn in turns]
    finally:
        ctx.close()


def test_every_request_after_a_restart_is_the_uninterrupted_runs(store_url: str) -> None:
    """Resume a compacted session after 70 turns, go on for 4: each request is the uninterrupted run's."""
    agent = _agent()
    uninterrupted = _run(agent, None, [0.0], range(74), small=True)
    assert _run(agent, store_url, [0.0], range(70), small=True) == uninterrupted[:70]
    clock = [0.0]
    ctx = agent._context(store_url, clock)
    try:
        resumed = [_turn(agent, ctx, clock, 70)]
        assert ctx.last is not None
        chunks = ctx.last.commit.items.chunks()
        unread = [c for c in chunks if isinstance(c, LazyChunk) and not c.loaded]
        resumed += [_turn(agent, ctx, clock, turn) for turn in range(71, 74)]
    finally:
        ctx.close()
    assert resumed == uninterrupted[70:]
    assert unread, f"all {len(chunks)} chunks were read: the resume read the whole commit"


def test_a_resumed_graph_reads_only_the_nodes_it_is_asked_for(store_url: str) -> None:
    """The lazily read graph equals the one read whole, and opening it reads no node."""
    agent = _agent()
    _run(agent, store_url, [0.0], range(12))
    store = open_store(store_url).unwrap()
    try:
        lazy = store.resume_session(SESSION).unwrap()
        whole = store.load_session(SESSION).unwrap()
        source = lazy.graph.nodes._read.__self__  # type: ignore[attr-defined]
        assert source._nodes == {}, "opening the session read nodes"
        head = lazy.graph.nodes[lazy.head]
        assert head == whole.graph.nodes[whole.head]
        assert len(source._nodes) == 1
        assert (lazy.head, lazy.running, len(lazy.graph)) == (
            whole.head,
            whole.running,
            len(whole.graph),
        )
        assert lazy.graph == whole.graph
    finally:
        store.close()


def test_after_a_whole_read_every_edge_comes_from_memory(store_url: str) -> None:
    """Once a walk read every node, each node's callees and children cost no read.

    Before, each edge list was a read of its own: opening a 100k-message session in a
    framework adapter (which walks the branch and each call's callees) made 67k reads.
    """
    agent = _agent()
    _run(agent, store_url, [0.0], range(12))
    store = open_store(store_url).unwrap()
    try:
        lazy = store.resume_session(SESSION).unwrap()
        whole = store.load_session(SESSION).unwrap()
        source = lazy.graph.nodes._read.__self__  # type: ignore[attr-defined]
        reads: list[str] = []
        real = source._read
        source._read = lambda operation, work: (reads.append(operation), real(operation, work))[1]
        ids = list(lazy.graph.nodes)
        assert reads == ["read_graph", "read_ids"]
        for node_id in ids:
            assert lazy.graph.callees_of(node_id) == whole.graph.callees_of(node_id)
            assert lazy.graph.children_of(node_id) == whole.graph.children_of(node_id)
        assert reads == ["read_graph", "read_ids"]
    finally:
        store.close()


def test_the_kept_reference_tracker_is_the_writers(store_url: str) -> None:
    """The tracker written turn by turn, what it changed each time, equals the writer's own."""
    agent, clock = _agent(), [0.0]
    ctx = _context(store_url, clock)
    ctx.add({"role": "user", "content": "Read every module and summarise the package."})
    for turn in range(16):
        _turn(agent, ctx, clock, turn)
    ctx.openai()
    written = ctx.engine.states[SESSION].references
    ctx.close()
    store = open_store(store_url).unwrap()
    try:
        kept = store.load_references(SESSION)
        commit = store.last_commit(SESSION).unwrap()
    finally:
        store.close()
    assert kept is not None
    assert commit is not None
    head, tracker = kept
    assert head == commit.head_node_id
    assert written.cited, "the agent's messages cite earlier results"
    assert (dict(tracker.index), dict(tracker.cited)) == (dict(written.index), dict(written.cited))


def test_a_damaged_chunk_read_on_demand_is_a_store_failure(tmp_path: Path) -> None:
    """An item changed outside ctxrules is found when its chunk is read: `StoreFailed`, not a crash."""
    agent, path = _agent(), tmp_path / "agent.sqlite"
    _run(agent, str(path), [0.0], range(40))
    store = open_store(str(path)).unwrap()
    commit = store.last_commit(SESSION).unwrap()
    store.close()
    assert commit is not None
    # The first chunk: the resume reads only the last one (an extension's items go after it).
    assert len(commit.items) > CHUNK
    digest = object_key(commit.items[0].digest)
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER items_no_update")
    (data,) = conn.execute("SELECT data FROM items WHERE digest = ?", (digest,)).fetchone()
    conn.execute("UPDATE items SET data = ? WHERE digest = ?", (pack(unpack(data) + " "), digest))
    conn.commit()
    conn.close()
    ctx = _context(str(path), [1_000_000.0])
    try:
        with pytest.raises(StoreFailed, match="does not match its digest"):
            ctx.openai()
    finally:
        ctx.close()


def test_a_damaged_item_an_extension_added_is_found_on_opening(tmp_path: Path) -> None:
    """An item the last commit added to its parent is read with it: a resume refuses it at once."""
    agent, path = _agent(), tmp_path / "agent.sqlite"
    _run(agent, str(path), [0.0], range(6))
    conn = sqlite3.connect(path)
    data = conn.execute("SELECT data FROM commits ORDER BY seq DESC LIMIT 1").fetchone()[0]
    added = json.loads(unpack(data))["added"]
    assert added, "the last commit is stored as its parent's extension"
    conn.execute("DROP TRIGGER items_no_update")
    key = object_key(added[-1])
    (item,) = conn.execute("SELECT data FROM items WHERE digest = ?", (key,)).fetchone()
    edited = pack(unpack(item).replace('"', '" '))
    conn.execute("UPDATE items SET data = ? WHERE digest = ?", (edited, key))
    conn.commit()
    conn.close()
    with pytest.raises(ConfigError, match="does not match its digest"):
        _context(str(path), [1_000_000.0])


def test_a_reply_to_the_first_request_after_a_resume_visits_no_old_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resumed request reuses the stored commit; storing its reply reads no stored chunk."""
    agent, path, clock = _agent(), str(tmp_path / "agent.sqlite"), [0.0]
    _run(agent, path, clock, range(40), small=True)
    ctx = agent._context(path, clock)
    try:
        request = ctx.openai()
        assert ctx.last is not None
        assert ctx.last.decision_path[0] == "generate_commit"
        ctx.close()
        ctx = agent._context(path, clock)
        assert ctx.openai() == request
        assert ctx.last is not None
        assert ctx.last.decision_path[0] == "reuse_commit"
        operations: list[str] = []
        run = SqliteStore._transaction

        def counted(self: SqliteStore, operation: str, *args: object, **kwargs: object) -> object:
            operations.append(operation)
            return run(self, operation, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(SqliteStore, "_transaction", counted)
        ctx.record(agent._reply(40, request))
        # Stored per turn (the default), the reply waits for the next request or close.
        ctx.close()
        assert "write_turn" in operations
        assert "read_chunk" not in operations, "the reply read the resumed commit's items"
    finally:
        ctx.close()
