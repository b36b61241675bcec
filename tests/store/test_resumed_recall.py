"""The first recall after a resume reads the nodes that hold the handle, not every stored id.

Issue 27: a resumed session answered its first ``recall`` by hashing every stored node's
id (389-443 ms at 100,000 messages). The store keeps each node's handle by index; the
answer is the one a session that never stopped gives, clashes included.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from ctxrules.canonical import canonical_json
from ctxrules.dag import Call, Graph, Role
from ctxrules.dag.session import Session
from ctxrules.engine.context import Context
from ctxrules.recall.growing import NodeHandles, SessionHandles
from ctxrules.rules.handles import handle_for
from ctxrules.store.protocol import Store
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter

#: Two tool call ids whose handles are the same (found by search: 40 bits collide).
CLASHING = ("call_1600047", "call_1682893")
TURNS = 40


def _context(store: str | None) -> Context:
    return Context(
        model="gpt-4o",
        store=store,
        session="resumed",
        clock=lambda: 0.0,
        tokenizer=HeuristicCounter(),
    )


def _grow(ctx: Context, ids: Iterator[str]) -> None:
    ctx.add({"role": "user", "content": "read the modules"})
    for turn, call_id in enumerate(ids):
        ctx.openai()
        ctx.record(openai_response(turn, "reading", [(call_id, "read_file", {"path": "m.py"})]))
        ctx.add_tool_result(call_id, f"module {turn}\n" + f"def f_{turn}(): return {turn}\n" * 40)


def _ids() -> Iterator[str]:
    yield from (f"c{turn}" for turn in range(TURNS))


def _result_handle(ctx: Context, call_id: str) -> str:
    """The handle of the tool result answering ``call_id`` (node ids are the session's own)."""
    graph = ctx.session.graph
    found = [n for n in graph.order if graph.nodes[n].role is Role.TOOL and graph.nodes[n].name]
    for node_id in found:
        node = graph.nodes[node_id]
        if str(node.output).startswith(f"module {call_id[1:]}\n"):
            return handle_for(node_id)
    raise AssertionError(call_id)


def _recall(ctx: Context, handle: str, n: int = 0) -> str | None:
    call = {
        "id": f"recall_{n}",
        "type": "function",
        "function": {"name": "recall", "arguments": canonical_json({"handle": handle})},
    }
    ctx.add({"role": "assistant", "content": None, "tool_calls": [call]})
    return ctx.answer_recall(call)


def test_the_first_recall_after_a_resume_hashes_only_new_nodes(
    store_url: str, hashed_handles: list[str]
) -> None:
    """The answers equal an uninterrupted session's; no stored node's id is hashed."""
    alive = _context(None)
    _grow(alive, _ids())
    stored = _context(store_url)
    _grow(stored, _ids())
    stored.close()
    handles = [_result_handle(alive, f"c{turn}") for turn in (3, 17, 39)]
    expected = [_recall(alive, handle, n) for n, handle in enumerate(handles)]
    assert all(text is not None and "def f_" in text for text in expected)
    again = _context(store_url)
    stored_ids = set(again.session.graph.order)
    hashed_handles.clear()
    answers = [_recall(again, handle, n) for n, handle in enumerate(handles)]
    assert answers == expected
    # Only the nodes appended since the resume (three calls, three answers), never a stored one.
    assert 0 < len(hashed_handles) <= 6
    assert not stored_ids & set(hashed_handles)
    again.close()


def _clashing_session(store: Store, ids: tuple[str, ...]) -> None:
    graph = Graph().append(Call("u", "user", output="read both")).unwrap()
    before = "u"
    for node_id in ids:
        graph = graph.append(Call(node_id, "tool", output=f"from {node_id}", predecessor=before))
        graph = graph.unwrap()
        before = node_id
    store.save_session(Session("clash", graph, before)).unwrap()


def test_a_handle_two_stored_nodes_share_is_ambiguous_after_a_resume(store: Store) -> None:
    """The store names both holders: the handle resolves to nothing, as in a whole index."""
    assert handle_for(CLASHING[0]) == handle_for(CLASHING[1])
    _clashing_session(store, CLASHING)
    graph = store.resume_session("clash").unwrap().graph
    nodes = NodeHandles().grown(graph)
    assert (nodes.start, nodes.visited) == (3, 0)
    index = SessionHandles(graph, nodes.answering(handle_for(CLASHING[0]), graph))
    assert index.ambiguous(handle_for(CLASHING[0]))
    plain = SessionHandles(graph, nodes.answering(handle_for("u"), graph)).get(handle_for("u"))
    assert plain is not None
    assert plain.text == "read both"


def test_a_stored_and_a_new_node_sharing_a_handle_are_ambiguous(store: Store) -> None:
    """The stored holder is found by index, the new one by the index kept in memory."""
    _clashing_session(store, CLASHING[:1])
    resumed = store.resume_session("clash").unwrap()
    graph = resumed.graph.append(
        Call(CLASHING[1], "tool", output="new", predecessor=CLASHING[0])
    ).unwrap()
    nodes = NodeHandles().grown(graph)
    assert (nodes.start, nodes.visited) == (2, 1)
    index = SessionHandles(graph, nodes.answering(handle_for(CLASHING[1]), graph))
    assert index.ambiguous(handle_for(CLASHING[1]))
    assert not SessionHandles(graph, nodes.answering(handle_for("u"), graph)).ambiguous(
        handle_for("u")
    )


def test_rows_without_handles_are_hashed_as_before(
    tmp_path: object, hashed_handles: list[str]
) -> None:
    """A store whose rows lack their handles answers by hashing every id, and still right."""
    path = str(tmp_path) + "/old.sqlite"
    ctx = _context(path)
    _grow(ctx, _ids())
    ctx.close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER nodes_append_only")
    conn.execute("UPDATE nodes SET handle = NULL")
    conn.commit()
    conn.close()
    alive = _context(None)
    _grow(alive, _ids())
    handle = _result_handle(alive, "c5")
    again = _context(path)
    stored_ids = set(again.session.graph.order)
    hashed_handles.clear()
    answer = _recall(again, handle)
    assert stored_ids <= set(hashed_handles)
    assert answer is not None
    assert "module 5" in answer
    assert answer == _recall(alive, handle)
    again.close()
