"""Offloaded originals in the SQLite store: content-addressed, immutable, migrated into old files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ctxrules.check import recoverable
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Call, Graph
from ctxrules.recall import handle_for, offload, recall_index
from ctxrules.store import SqliteStore
from ctxrules.store.schema import APPLICATION_ID, SCHEMA_VERSION, TABLES

HUGE = "x" * 5000 + "END"


def test_offload_keeps_the_whole_original_and_recall_serves_it() -> None:
    """A capped result's original goes to the store once, and the index built on it passes invariant 16."""
    graph = Graph().append(Call("t", "tool", name="cat", output=HUGE)).unwrap()
    note = f"xxx…[4000 of 5003 characters cut; recall {handle_for('t')}]…END"
    commit = ContextCommit("s").with_items([ContextItem("t", "tool", state="aged", rendered=note)])
    with SqliteStore.open(":memory:").unwrap() as store:
        store.create_session("s").unwrap()
        assert offload(store, "s", commit, graph).unwrap() == 1
        assert offload(store, "s", commit, graph).unwrap() == 1  # again: a no-op
        kept = store.session_blobs("s").unwrap()
        assert kept == {handle_for("t"): HUGE}
        assert store.put_blob("s", handle_for("t"), "other").failure().name == "handle"
    index = recall_index(graph, commit, kept)
    assert index.get(handle_for("t")).offloaded
    assert recoverable(commit, graph, kept) == []
    assert [v.found for v in recoverable(commit, graph, {handle_for("t"): "tampered"})] == [
        "other text in the blob store"
    ]


def test_a_version_1_store_gains_the_blob_tables(tmp_path: Path) -> None:
    """A store file made before offload opens, migrates to schema 2 and keeps blobs."""
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    for statement in TABLES:
        conn.execute(statement)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with SqliteStore.open(path).unwrap() as store:
        store.create_session("s").unwrap()
        assert store.put_blob("s", "h:aaaaaaaa", "kept").unwrap()
        assert store.get_blob("s", "h:aaaaaaaa").unwrap() == "kept"
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
