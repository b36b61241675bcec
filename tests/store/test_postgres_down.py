"""The PostgreSQL server stopped under an open store: each call fails at once, then works again.

A private server (this module's own, so stopping it disturbs no other test) is stopped as
a crash would stop it (``pg_ctl -m immediate``) under an open store and an open `Context`.
Every call while it is down is a retryable `PostgresFailed` naming its operation, returned
after one connection attempt instead of after the pool's whole timeout; once the server is
back the next call succeeds on the same store object, and everything acknowledged is there.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from returns.result import Failure, Result

from ctxrules.dag import Call
from ctxrules.engine.context import StoreFailed
from ctxrules.store import PostgresFailed, StoreError, open_store

sys.path.insert(0, str(Path(__file__).parent))
import pg_server
from context_writer import loop_context
from pg_proxy import Proxy

pytest.importorskip("psycopg_pool")
from ctxrules.store.postgres import PostgresStore

T = TypeVar("T")

#: A pool timeout no test waits out: a call that queues on the pool would hang the test.
POOL_TIMEOUT = 600.0
#: Far above the bound (one connection attempt), far below the pool timeout.
HANG = 60.0


@pytest.fixture(scope="module")
def server() -> Iterator[pg_server.Server]:
    """This module's own server, which its tests stop and start."""
    yield from pg_server.running()


def _within(seconds: float, call: Callable[[], T]) -> T:
    """``call``'s value (or exception); the test fails if it has not returned after ``seconds``."""
    box: list[T] = []
    raised: list[BaseException] = []

    def work() -> None:
        try:
            box.append(call())
        except BaseException as err:  # noqa: BLE001 - handed to the test's thread
            raised.append(err)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(seconds)
    if raised:
        raise raised[0]
    if not box:
        pytest.fail(f"the call did not return in {seconds:.0f} s: it waited on the pool")
    return box[0]


def _down_failure(result: Result[object, StoreError], operation: str) -> None:
    # Located (names its operation), retryable, and nothing else.
    assert isinstance(result, Failure), result
    error = result.failure()
    assert isinstance(error, PostgresFailed), error
    assert error.operation == operation
    assert error.retryable
    assert str(error).startswith(f"{operation}: postgresql error: ")


@pytest.fixture
def store(server: pg_server.Server) -> Iterator[PostgresStore]:
    """A store on the private server whose pool would make a caller wait 10 minutes."""
    opened = PostgresStore.open(
        pg_server.fresh_schema_url(server), max_size=2, timeout=POOL_TIMEOUT, connect_timeout=2
    ).unwrap()
    yield opened
    opened.close()


def test_store_calls_while_the_server_is_down_fail_at_once_and_work_once_it_is_back(
    server: pg_server.Server, store: PostgresStore
) -> None:
    """20 calls on a stopped server each fail after one connection attempt; the next after the start succeeds."""
    store.create_session("s").unwrap()
    store.append_at_head("s", Call("a", "user", output="first")).unwrap()
    store.append_at_head("s", Call("b", "assistant", output="second", predecessor="a")).unwrap()
    server.halt()
    try:
        for i in range(10):
            late = Call(f"lost{i}", "user", output="never stored", predecessor="b")
            _down_failure(
                _within(HANG, lambda late=late: store.append_at_head("s", late)), "append_at_head"
            )
            _down_failure(_within(HANG, store.list_sessions), "list_sessions")
        assert not store.reachable
    finally:
        server.resume()
    assert (
        store.append_at_head("s", Call("c", "user", output="third", predecessor="b")).unwrap() == 2
    )
    assert store.reachable
    session = store.load_session("s").unwrap()
    assert list(session.graph.order) == ["a", "b", "c"]
    assert [session.graph.nodes[n].output for n in session.graph.order] == [
        "first",
        "second",
        "third",
    ]


def test_a_context_on_a_stopped_server_raises_at_once_and_carries_on_once_it_is_back(
    server: pg_server.Server, store: PostgresStore
) -> None:
    """`Context.add` raises StoreFailed at once while the server is down; after the start nothing it held is lost."""
    clock = [1_000.0]
    ctx = loop_context(store, clock)
    ctx.add({"role": "user", "content": "before"})
    ctx.openai()
    server.halt()
    try:
        for i in range(5):
            message = {"role": "user", "content": f"during {i}"}
            with pytest.raises(StoreFailed, match=r"^write_turn: postgresql error: .*; retry\)$"):
                _within(HANG, lambda message=message: ctx.add(message))
    finally:
        server.resume()
    ctx.add({"role": "user", "content": "after"})
    expected = ctx.openai()
    again = loop_context(store, clock)
    said = [again.session.graph.nodes[n].output for n in again.session.graph.order]
    assert said == ["before", *(f"during {i}" for i in range(5)), "after"]
    assert again.openai() == expected


def test_the_connect_timeout_comes_from_the_url_or_the_argument_and_must_be_seconds(
    server: pg_server.Server,
) -> None:
    """A connect_timeout that is not a positive number of seconds is refused by name, from either place."""
    url = pg_server.fresh_schema_url(server)
    for bad in (0, -1.0, float("nan"), True):
        refused = PostgresStore.open(url, connect_timeout=bad)
        assert "connect_timeout" in str(refused.failure()), bad
    assert "connect_timeout" in str(open_store(url + "&connect_timeout=soon").failure())
    with open_store(url + "&connect_timeout=3").unwrap() as opened:
        assert opened.list_sessions().unwrap() == []


@pytest.mark.slow
def test_each_call_on_a_stopped_server_returns_within_one_connect_timeout(
    server: pg_server.Server, store: PostgresStore
) -> None:
    """Wall time of 20 calls on a stopped server: each within connect_timeout (2 s) + 3 s of margin."""
    store.create_session("t").unwrap()
    server.halt()
    try:
        spent = []
        for _ in range(20):
            started = time.monotonic()
            _down_failure(store.list_sessions(), "list_sessions")
            spent.append(time.monotonic() - started)
    finally:
        server.resume()
    assert max(spent) < 2 + 3, spent
    assert store.list_sessions().unwrap()[0].id == "t"


@pytest.mark.slow
def test_a_server_that_stops_answering_costs_each_call_one_connect_timeout(
    server: pg_server.Server,
) -> None:
    """Through a proxy that drops its connections and then answers nothing: 5 calls, each within 2 s + 3 s."""
    schema = pg_server.fresh_schema_url(server).rpartition("%3D")[2]
    proxy = Proxy(server.root / ".s.PGSQL.5432")
    store = PostgresStore.open(
        proxy.url(schema), max_size=2, timeout=POOL_TIMEOUT, connect_timeout=2
    ).unwrap()
    try:
        store.create_session("lost").unwrap()
        store.append_at_head("lost", Call("a", "user", output="kept")).unwrap()
        proxy.cut()
        spent = []
        for _ in range(5):
            started = time.monotonic()
            _down_failure(_within(HANG, store.list_sessions), "list_sessions")
            spent.append(time.monotonic() - started)
        assert not store.reachable
        proxy.mend()
        assert (
            store.append_at_head("lost", Call("b", "user", output="also", predecessor="a")).unwrap()
            == 1
        )
        assert store.reachable
    finally:
        store.close()
        proxy.close()
    # The first call found its connection dropped; each later one waited for one attempt.
    assert max(spent) < 2 + 3, spent
    assert min(spent[1:]) >= 1.5, spent
