"""Schema version 10: item rows, tree nodes and long outputs stored packed (issue 27).

A store held each item version as its JSON, each tree node as its digits and each output
in its node row: a 600-call session's store was 4.9 times its history. Packed rows read
back to exactly the text the digests are made of, on both backends; rows stored before
stay readable as they were.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from raw_sql import raw_rows

from ctxrules.canonical import canonical_json
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Call
from ctxrules.dag.payload import thaw
from ctxrules.engine.context import Context
from ctxrules.store import SqliteStore, open_store
from ctxrules.store.chunks import OUTPUT_CHUNK, PACK_FROM
from ctxrules.store.objects import node_text, text_digest, tree_row, tree_text
from ctxrules.store.packing import (
    DICTIONARY,
    DIGESTS,
    FAST_FROM,
    HEADER,
    VERSION,
    pack,
    pack_digests,
    unpack,
    unpack_digests,
)
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

_HEX_DIGEST = st.binary(min_size=32, max_size=32).map(bytes.hex)


@given(st.text())
def test_a_packed_text_unpacks_to_itself(text: str) -> None:
    """Any text (NULs, astral characters, JSON or not) round-trips through a packed row."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return  # a lone surrogate is no stored text: the store refuses it before packing
    row = pack(text)
    assert row[:1] == bytes((VERSION,))
    assert unpack(row) == text
    assert unpack(memoryview(row)) == text


@pytest.mark.parametrize("size", [FAST_FROM - 1, FAST_FROM, 3 * FAST_FROM])
def test_a_long_text_is_packed_faster_and_still_unpacks_to_itself(size: int) -> None:
    """From `FAST_FROM` bytes a text is DEFLATEd at level 1: a different stream, the same text."""
    text = "".join(f"line {n}: value {n * 7919 % 1000}\n" for n in range(size))[:size]
    row = pack(text)
    assert unpack(row) == text
    level = 6 if size < FAST_FROM else 1
    packer = zlib.compressobj(level, zlib.DEFLATED, -15, zdict=DICTIONARY)
    assert row[1:] == packer.compress(text.encode()) + packer.flush()


def test_an_item_row_packs_to_about_a_third() -> None:
    """The preset dictionary is what makes a short item row small (DEFLATE alone saves little)."""
    item = ContextItem(
        "tool:t1", "tool", rendered="3 files changed", tokens=4, tool_call_id="t1", tool_name="Bash"
    )
    text = canonical_json(item.to_json())
    assert len(pack(text)) * 2 < len(text.encode())


@pytest.mark.parametrize(
    "row",
    [pack("{}")[:-1], bytes((VERSION,)) + b"\xff\xfe", pack("{}") + b"x", b"\xff{}"],
    ids=["cut short", "not deflate", "bytes after the end", "not utf-8"],
)
def test_a_damaged_packed_row_is_refused(row: bytes) -> None:
    """Damage is a `ValueError` (the store reports it as a corrupt record), never other text."""
    with pytest.raises(ValueError):  # noqa: PT011 - each kind of damage has its own message
        unpack(row)


@given(st.lists(_HEX_DIGEST, min_size=1, max_size=64), st.integers(0, 3))
def test_a_tree_node_in_binary_reads_back_to_the_text_its_digest_hashes(
    children: list[str], level: int
) -> None:
    """A tree node is stored as 2 + 32 bytes a child and read back as the exact text hashed."""
    row = tree_row(level, children)
    assert isinstance(row, bytes)
    assert len(row) == 2 + 32 * len(children)
    assert unpack_digests(row) == (level, children)
    text, fields = tree_text(row)
    assert fields == (level, children)
    assert text_digest(text) == text_digest(node_text(level, children))


@pytest.mark.parametrize(
    "children",
    [["AB" * 32], ["ab" * 31], ["ab " * 21 + "a"], ["x"]],
    ids=["upper case", "short", "spaced", "not hex"],
)
def test_a_tree_node_without_hex_digests_is_stored_as_its_text(children: list[str]) -> None:
    """Upper case, short or spaced children are not digests: the node keeps its JSON text."""
    assert pack_digests(0, children) is None
    assert tree_row(0, children) == node_text(0, children)
    assert tree_text(node_text(0, children)) == (node_text(0, children), None)


def test_sqlite_stores_items_trees_and_long_outputs_packed(tmp_path: Path) -> None:
    """Every object and commit row and every output from `PACK_FROM` characters is packed, and reads back."""
    path = tmp_path / "s.db"
    store = SqliteStore.open(path).unwrap()
    store.create_session("s").unwrap()
    outputs = ["short", "y" * (PACK_FROM - 1), "z" * PACK_FROM, {"rows": ["w"] * 400}]
    session_nodes = []
    for number, output in enumerate(outputs):
        call = Call(
            f"n{number}", "tool", output=output, predecessor=f"n{number - 1}" if number else None
        )
        store.append_node("s", call).unwrap()
        session_nodes.append(call)
    items = [ContextItem(f"i{n}", "user", rendered="hi " * n, tokens=n) for n in range(70)]
    commit = ContextCommit("s").append_items(items)
    store.put_commit(commit).unwrap()
    store.close()

    forms = {str(n): c for n, c in raw_rows(path, "SELECT id, chunks FROM nodes")}
    assert forms == {"n0": 0, "n1": 0, "n2": 1, "n3": 1}
    pieces = raw_rows(path, "SELECT text FROM node_chunks")
    assert all(isinstance(p, bytes) and p[:1] == bytes((VERSION,)) for (p,) in pieces)
    assert all(isinstance(d, bytes) for (d,) in raw_rows(path, "SELECT data FROM items"))
    ((row,),) = raw_rows(path, "SELECT data FROM commits")
    assert isinstance(row, bytes)
    assert row[:1] == bytes((HEADER,))
    trees = raw_rows(path, "SELECT data FROM trees")
    assert trees
    assert all(isinstance(d, bytes) and d[:1] == bytes((DIGESTS,)) for (d,) in trees)

    with open_store(str(path)).unwrap() as again:
        graph = again.load_session("s").unwrap().graph
        read = [canonical_json(thaw(graph.nodes[c.id].output)) for c in session_nodes]
        assert read == [canonical_json(output) for output in outputs]
        assert again.get_commit(commit.id).unwrap() == commit


def test_a_huge_output_is_packed_piece_by_piece(tmp_path: Path) -> None:
    """An output over a piece is still cut in pieces, each packed alone (no whole copy at once)."""
    path = tmp_path / "s.db"
    store = SqliteStore.open(path).unwrap()
    store.create_session("s").unwrap()
    output = "line of a log\n" * (OUTPUT_CHUNK // 7)
    store.append_node("s", Call("big", "tool", output=output)).unwrap()
    store.close()
    pieces = [data for _, data in raw_rows(path, "SELECT n, text FROM node_chunks ORDER BY n")]
    assert len(pieces) == 2
    assert all(isinstance(p, bytes) and p[:1] == bytes((VERSION,)) for p in pieces)
    assert sum(map(len, pieces)) * 20 < len(output)
    assert "".join(map(unpack, pieces)) == canonical_json(output)
    with open_store(str(path)).unwrap() as again:
        assert again.load_session("s").unwrap().graph.nodes["big"].output == output


def _context(store: str | None, clock: list[float]) -> Context:
    return Context(
        model="gpt-4o",
        window=16_000,
        store=store,
        session="loop",
        tokenizer=HeuristicCounter(),
        clock=lambda: clock[0],
    )


def _loop(store: str | None, clock: list[float], turns: int, size: Callable[[int], int]) -> Context:
    ctx = _context(store, clock)
    for turn in range(turns):
        clock[0] += 5
        ctx.add({"role": "user", "content": f"step {turn}: look at file{turn}.py"})
        call = (f"c{turn}", "read", {"p": turn})
        ctx.record(openai_response(turn, "", [call], (100 + turn, 0)))
        ctx.add_tool_result(f"c{turn}", (f"def f{turn}(): return {turn}\n" * 400)[: size(turn)])
        ctx.openai()
    return ctx


def test_a_stored_loop_reads_back_the_same_requests_after_packing(
    fresh_store_url: Callable[[], str],
) -> None:
    """A live loop with outputs of every size, on each backend, reopened.

    Its next request is the one the same loop without a store builds.
    """
    url = fresh_store_url()
    sizes = lambda turn: [10, PACK_FROM - 1, PACK_FROM, 3_000, 9_000][turn % 5]  # noqa: E731
    _loop(url, [1000.0], 25, sizes).close()
    later = [1000.0]
    plain = _loop(None, later, 25, sizes)
    later[0] = 2000.0
    with _context(url, [2000.0]) as ctx:
        ctx.add({"role": "user", "content": "go on"})
        plain.add({"role": "user", "content": "go on"})
        assert ctx.openai() == plain.openai()
