"""A commit that only adds to its parent's items is stored as its extension, on both backends.

Counted on the rows stored, not timed: an extension row names its parent and the digests
of the items it added, and no tree node is written for it; a chain of extensions ends at a
commit with a tree at most `MAX_CHAIN` back; every commit reads back with its id
recomputed, in a new process's store as in the writer's; a damaged chain is a
`CorruptRecord`, never a wrong commit.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.commit.vector import ItemVector
from ctxrules.engine.context import Context
from ctxrules.store import open_store
from ctxrules.store.objects import MAX_CHAIN, KnownObjects, _extension
from ctxrules.store.packing import HEADER, pack, unpack
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter


def _loop(url: str, turns: int, first: int = 0) -> list[str]:
    """Turns of a small agent loop on the store; the ids of the commits its requests used."""
    clock = [1_000.0 + 10 * first]
    ctx = Context(
        model="gpt-4o",
        window=200_000,
        store=url,
        session="ext",
        tokenizer=HeuristicCounter(),
        clock=lambda: clock[0],
    )
    used = []
    try:
        for turn in range(first, first + turns):
            clock[0] += 10
            ctx.add({"role": "user", "content": f"step {turn}: look at m{turn}.py"})
            ctx.openai()
            assert ctx.last is not None
            used.append(ctx.last.commit.id)
            call = (f"c{turn}", "read_file", {"path": f"m{turn}.py"})
            reply = ctx.record(openai_response(turn, f"reading m{turn}", [call], (900, 0)))
            ctx.add_tool_result(reply.tool_calls[0].id, f"def f{turn}(): pass\n" * (turn % 7 + 1))
    finally:
        ctx.close()
    return used


def _rows(url: str) -> list[dict[str, Any]]:
    """The commit rows' ids and headers, in stored order."""
    if url.startswith("postgresql"):
        import psycopg  # noqa: PLC0415 - PostgreSQL only

        with psycopg.connect(url) as pg:
            rows = pg.execute("SELECT id, data FROM commits ORDER BY seq").fetchall()
    else:
        with sqlite3.connect(url) as conn:
            rows = conn.execute("SELECT id, data FROM commits ORDER BY seq").fetchall()
    return [{"id": i, **json.loads(unpack(d))} for i, d in rows]


def test_requests_between_batch_points_store_extensions(
    fresh_store_url: Callable[[], str],
) -> None:
    """Most commits are extensions; each chain is at most MAX_CHAIN long; all read back."""
    url = fresh_store_url()
    used = _loop(url, 40)
    rows = _rows(url)
    extensions = [r for r in rows if "extends" in r]
    assert len(extensions) >= len(rows) // 2, (len(extensions), len(rows))
    assert all(r["root"] is None and isinstance(r["added"], list) for r in extensions)
    assert all(
        "extends" not in r and isinstance(r["root"], str) for r in rows if r not in extensions
    )
    depths = [r.get("depth", 0) for r in rows]
    # Each commit extends the one before, or has a tree: right after the cap, always.
    assert all(d == 0 or d == before + 1 for before, d in zip([-1, *depths], depths, strict=False))
    assert MAX_CHAIN in depths
    assert depths[depths.index(MAX_CHAIN) + 1] == 0
    by_id = {row["id"]: row for row in rows}
    for row in extensions:
        # Each link names its parent, one step shorter (a tree ends the chain).
        assert row["extends"] == row["parent_ids"][0]
        assert by_id[row["extends"]].get("depth", 0) == row["depth"] - 1
    with open_store(url).unwrap() as store:
        stored = store.commits_for("ext").unwrap()  # each id recomputed from what was read
    assert {c.id for c in stored} >= set(used)
    # A new process picks up the chain: its first commit extends the last one stored.
    resumed = _loop(url, 3, first=40)
    new = {row["id"]: row for row in _rows(url)[len(rows) :]}
    assert new[resumed[0]]["parent_ids"] == [rows[-1]["id"]]
    assert rows[-1].get("depth", 0) < MAX_CHAIN
    assert new[resumed[0]]["extends"] == rows[-1]["id"]
    assert new[resumed[0]]["depth"] == rows[-1].get("depth", 0) + 1


@pytest.mark.parametrize("backend", ["sqlite"])
def test_an_extension_whose_parent_is_gone_is_corrupt(fresh_store_url: Callable[[], str]) -> None:
    """An extension names its parent: with the parent's row gone, the commit is `CorruptRecord`."""
    url = fresh_store_url()
    _loop(url, 4)
    conn = sqlite3.connect(url)
    (data,) = conn.execute("SELECT data FROM commits ORDER BY seq DESC LIMIT 1").fetchone()
    header = json.loads(unpack(data))
    assert "extends" in header
    conn.execute("DROP TRIGGER IF EXISTS commits_no_delete")
    conn.execute("DELETE FROM commits WHERE id = ?", (header["extends"],))
    conn.commit()
    conn.close()
    with open_store(url).unwrap() as store:
        read = store.commits_for("ext")
    assert "its parent" in read.failure().message  # type: ignore[attr-defined]


@pytest.mark.parametrize("backend", ["sqlite"])
def test_an_extension_with_a_wrong_depth_is_corrupt(fresh_store_url: Callable[[], str]) -> None:
    """A chain's length is checked link by link: a row claiming another length is refused."""
    url = fresh_store_url()
    _loop(url, 4)
    conn = sqlite3.connect(url)
    commit_id, data = conn.execute(
        "SELECT id, data FROM commits ORDER BY seq DESC LIMIT 1"
    ).fetchone()
    header = json.loads(unpack(data))
    header["depth"] += 1
    conn.execute("DROP TRIGGER IF EXISTS commits_no_update")
    edited = pack(json.dumps(header), HEADER)
    conn.execute("UPDATE commits SET data = ? WHERE id = ?", (edited, commit_id))
    conn.commit()
    conn.close()
    with open_store(url).unwrap() as store:
        read = store.get_commit(commit_id)
    assert "not the one it extends" in read.failure().message  # type: ignore[attr-defined]


def test_a_commit_is_known_stored_only_once_its_transaction_committed() -> None:
    """A rolled-back write is forgotten (nothing extends it); each thread's write is its own."""
    known = KnownObjects()
    items = ItemVector.of([ContextItem("n", "user")])
    known.pending["rolled-back"] = (items, 0)
    known.settle(committed=False)
    known.pending["committed"] = (items, 0)
    seen_elsewhere: list[int] = []
    other = threading.Thread(target=lambda: seen_elsewhere.append(len(known.pending)))
    other.start()
    other.join()
    known.settle(committed=True)
    assert seen_elsewhere == [0]
    assert set(known.chains) == {"committed"}


def test_only_a_commit_that_keeps_its_parents_items_whole_extends_it() -> None:
    """Added items only: an extension. A changed, dropped or too long a chain: a tree."""
    a, b, c = (ContextItem(n, "user", rendered=n, tokens=1) for n in "abc")
    parent = ContextCommit("s").append_items([a, b])
    known = KnownObjects()
    known.remember(parent.id, parent.items, 0)

    def child(commit: ContextCommit) -> ContextCommit:
        return attrs.evolve(commit, parent_ids=(parent.id,))

    assert _extension(child(parent.append_items([c])), known) == (parent.id, (c,), 1)
    assert _extension(child(parent), known) == (parent.id, (), 1)
    changed = parent.replace_items({0: ContextItem("a", "user", rendered="A", tokens=1)})
    assert _extension(child(changed.append_items([c])), known) is None
    assert _extension(child(ContextCommit("s").append_items([a])), known) is None
    known.remember(parent.id, parent.items, MAX_CHAIN)
    assert _extension(child(parent.append_items([c])), known) is None
