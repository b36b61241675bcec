"""A write made again after its acknowledgment was lost is the same write, not a race.

When the connection drops while the server commits (a server stopped with ``-m
immediate``, a network cut), the client gets "server closed the connection" for a write
that is stored. `PostgresFailed` says to retry it; the retry finds its nodes stored the
same and the head already at its new node. It used to be refused as `HeadMoved`, so a
`Context` raised `SessionMoved` ("moved on by another writer") with no other writer, and
every later request failed until `reload()`.
"""

from __future__ import annotations

from typing import Any

import pytest
from returns.result import Failure, Result, Success

import ctxrules
from ctxrules.dag import Call
from ctxrules.store import HeadMoved, PostgresFailed, Store, open_store
from ctxrules.store.errors import StoreError
from ctxrules.store.turn import TurnWrite, TurnWritten
from ctxrules.testing.responses import openai_response


def _started(store: Store) -> TurnWrite:
    store.create_session("s").unwrap()
    first = TurnWrite("s", nodes=(Call("u1", "user", output="hi"),), head=(None, "u1"))
    store.write_turn(first).unwrap()
    return TurnWrite(
        "s",
        nodes=(Call("a1", "assistant", output="yes", predecessor="u1"),),
        head=("u1", "a1"),
    )


def test_a_turn_written_again_is_stored_once(store: Store) -> None:
    """The same turn twice: the second is a no-op with the same seqs, the head where it was."""
    turn = _started(store)
    assert store.write_turn(turn).unwrap().seqs == (1,)
    again = store.write_turn(turn)
    assert isinstance(again, Success), again
    assert again.unwrap().seqs == (1,)
    assert store.get_head("s").unwrap() == "a1"
    assert list(store.load_graph("s").unwrap().order) == ["u1", "a1"]


def test_a_turn_behind_another_writer_is_still_refused(store: Store) -> None:
    """The head at a node this turn did not write: `HeadMoved`, nothing of the turn stored."""
    turn = _started(store)
    other = TurnWrite(
        "s", nodes=(Call("b1", "assistant", output="no", predecessor="u1"),), head=("u1", "b1")
    )
    store.write_turn(other).unwrap()
    refused = store.write_turn(turn)
    assert isinstance(refused, Failure)
    assert isinstance(refused.failure(), HeadMoved)
    assert "a1" not in store.load_graph("s").unwrap().nodes


def test_a_head_at_the_new_node_with_a_node_not_stored_is_refused(store: Store) -> None:
    """Only a turn wholly stored already is a retry: one adding a node is checked as always."""
    turn = _started(store)
    store.write_turn(turn).unwrap()
    more = TurnWrite(
        "s",
        nodes=(turn.nodes[0], Call("t1", "tool", name="ls", output="", caller="a1")),
        head=("u1", "a1"),
    )
    refused = store.write_turn(more)
    assert isinstance(refused, Failure)
    assert isinstance(refused.failure(), HeadMoved)


def test_append_at_head_made_again_returns_its_seq(store: Store) -> None:
    """`append_at_head` retried after a lost acknowledgment: its stored seq, not `HeadMoved`."""
    store.create_session("s").unwrap()
    call = Call("a", "user", output="first")
    assert store.append_at_head("s", call).unwrap() == 0
    assert store.append_at_head("s", call).unwrap() == 0
    late = store.append_at_head("s", Call("b", "user", output="late"))
    assert isinstance(late.failure(), HeadMoved)


class _LostAck:
    """A store whose next `write_turn` is stored and then reported lost, as a dropped connection does."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.lose = False

    def write_turn(self, turn: TurnWrite) -> Result[TurnWritten, StoreError]:
        written = self.inner.write_turn(turn)
        if self.lose and isinstance(written, Success):
            self.lose = False
            return Failure(
                PostgresFailed("write_turn", "server closed the connection", retryable=True)
            )
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_context_goes_on_after_a_lost_acknowledgment(store_url: str) -> None:
    """The request after a lost acknowledgment stores the turn again, and the loop goes on."""
    inner = open_store(store_url).unwrap()
    lossy = _LostAck(inner)
    ctx = ctxrules.Context(model="gpt-4o", store=lossy, session="s")  # type: ignore[arg-type]
    ctx.add({"role": "user", "content": "one"})
    ctx.openai()
    ctx.record(openai_response(1, "first"))
    ctx.add({"role": "user", "content": "two"})
    lossy.lose = True
    with pytest.raises(ctxrules.StoreFailed) as lost:
        ctx.openai()
    assert not isinstance(lost.value, ctxrules.SessionMoved)
    request = ctx.openai()
    ctx.record(openai_response(2, "second"))
    ctx.close()
    with ctxrules.Context(model="gpt-4o", store=inner, session="s") as again:
        assert [m["content"] for m in again.openai()["messages"]][:3] == ["one", "first", "two"]
    assert [m["content"] for m in request["messages"]] == ["one", "first", "two"]
    inner.close()
