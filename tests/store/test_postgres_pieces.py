"""A huge value goes to PostgreSQL in pieces: no message, so no libpq buffer, holds it whole.

libpq keeps its send buffer as large as the largest message a connection ever sent. A
50 MB tool output went whole in two statements (the node's output, then its offloaded
original), each on a pooled connection that then kept ~50 MB for the rest of the process:
the soak's peak memory growth at 200k was 302-336 MB with PostgreSQL, ~200 MB with SQLite.
Counted here in libpq's own trace of what the connections sent, not in process memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pg_server
import pytest

from ctxrules.dag import Session
from ctxrules.engine.context import Context
from ctxrules.recall import handle_for
from ctxrules.store import open_store
from ctxrules.store.postgres.rows import PIECE_CHARS
from ctxrules.store.protocol import Store
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter


def _huge() -> str:
    # 3.5 pieces long; characters of 2, 3 and 4 UTF-8 bytes sit across each piece's end.
    line = "compiling module ... ok\n"
    text = line * (int(PIECE_CHARS * 3.5) // len(line))
    for edge in range(PIECE_CHARS, len(text), PIECE_CHARS):
        text = text[: edge - 2] + "é😀€" + text[edge + 1 :]
    return text + "error: linker failed at the end\n"


@contextmanager
def _traced(monkeypatch: pytest.MonkeyPatch, store: Store, path: Path) -> Iterator[Path]:
    """A trace (libpq's) of every message the connections ``store`` lends send, in ``path``."""
    from ctxrules.store.postgres.link import Link  # noqa: PLC0415 - PostgreSQL only

    mine, lend = store._link, Link.connection  # type: ignore[attr-defined]
    with path.open("wb") as handle:

        @contextmanager
        def traced(link: Link) -> Iterator[Any]:
            with lend(link) as conn:
                if link is mine:
                    conn.pgconn.trace(handle.fileno())
                try:
                    yield conn
                finally:
                    if link is mine:
                        conn.pgconn.untrace()

        with monkeypatch.context() as patched:
            patched.setattr(Link, "connection", traced)
            yield path


def _largest_sent(path: Path) -> int:
    # A trace line: timestamp, F (sent) or B (received), the message's length, its type...
    sizes = [
        int(fields[2])
        for line in path.read_bytes().splitlines()
        if len(fields := line.split(b"\t", 3)) > 2 and fields[1] == b"F"
    ]
    assert sizes, "nothing traced"
    return max(sizes)


def test_a_huge_output_goes_in_pieces_and_is_stored_whole(
    postgres_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No message over a piece (~1 MB) for a 3.5 MB output, stored once, whole, and recalled whole."""
    store = open_store(pg_server.fresh_schema_url(postgres_server)).unwrap()
    ctx = Context(
        model="gpt-4o",
        window=200_000,
        store=store,
        session="t",
        tokenizer=HeuristicCounter(),
        clock=lambda: 5.0,
    )
    ctx.add({"role": "user", "content": "build it"})
    ctx.openai()
    ctx.record(openai_response(1, "building", [("c1", "run", {"cmd": "make"})], (100, 0)))
    huge = _huge()
    with _traced(monkeypatch, store, tmp_path / "trace") as trace:
        ctx.add_tool_result("c1", huge)
        ctx.openai()
        ctx.record(openai_response(2, "it fails at the link", [], (3_000, 0)))
    ctx.close()
    # Before: one message held the whole output (3.5 MB), another its original.
    assert _largest_sent(trace) < PIECE_CHARS + 64_000
    graph = store.load_graph("t").unwrap()
    tools = [n for n in graph.nodes.values() if n.role.value == "tool"]
    assert [n.output for n in tools] == [huge]
    tool = tools[0]
    # The node is the original: no copy is written, and its handle gives it back whole.
    assert store.session_blobs("t").unwrap() == {}
    assert store.get_blob("t", handle_for(tool.id)).unwrap() == huge
    assert len(store.search("compiling", session_id="t").unwrap()) == 1
    store.close()


def test_a_huge_output_appended_with_its_seq_read_back_goes_in_pieces(
    postgres_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The insert that reads its seq back (a read of the same transaction) stages its values too."""
    store = open_store(pg_server.fresh_schema_url(postgres_server)).unwrap()
    huge = _huge()
    session = (
        Session("s1")
        .send("user", "build it", created_at=1.0)
        .bind(lambda s: s.record_call(s.head, "run", {"cmd": "make"}, huge, status="done"))
        .unwrap()
    )
    store.create_session("s1").unwrap()
    with _traced(monkeypatch, store, tmp_path / "trace") as trace:
        seqs = [
            store.append_node("s1", session.graph.nodes[i]).unwrap() for i in session.graph.order
        ]
    assert seqs == [0, 1]
    assert _largest_sent(trace) < PIECE_CHARS + 64_000
    graph = store.load_graph("s1").unwrap()
    assert [n.output for n in graph.nodes.values() if n.name == "run"] == [huge]
    store.close()
