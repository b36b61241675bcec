"""Moving a head is compare-and-set on the head the mover last saw."""

from __future__ import annotations

from returns.result import Success

from ctxrules.dag import Call, Session, UnknownNode, UnknownReads
from ctxrules.store import DagRefused, HeadMoved, NodeConflict, Store, UnknownSession, open_store


def _stored(store: Store, session: Session) -> tuple[str, str, str]:
    store.create_session("s1").unwrap()
    store.append_graph("s1", session.graph).unwrap()
    order = session.graph.order
    return order[0], order[1], order[-1]


def test_a_move_from_the_expected_head_succeeds(store: Store, session: Session) -> None:
    """None -> a -> b, each move naming the head it replaces, lands."""
    a, b, _ = _stored(store, session)
    assert store.move_head("s1", "main", None, a) == Success(None)
    assert store.move_head("s1", "main", a, b) == Success(None)
    assert store.get_head("s1") == Success(b)


def test_a_move_from_a_stale_head_fails_naming_the_actual(store: Store, session: Session) -> None:
    """A mover expecting an old head gets HeadMoved with the actual head, and nothing moves."""
    a, b, c = _stored(store, session)
    store.move_head("s1", "main", None, a).unwrap()
    store.move_head("s1", "main", a, b).unwrap()
    failure = store.move_head("s1", "main", a, c).failure()
    assert failure == HeadMoved("s1", "main", a, b)
    assert failure.message == (
        f"session 's1': head 'main' is {b!r}, not the expected {a!r}; reload and retry"
    )
    assert store.move_head("s1", "main", None, c).failure() == HeadMoved("s1", "main", None, b)
    assert store.get_head("s1") == Success(b)


def test_expecting_a_head_that_does_not_exist_fails(store: Store, session: Session) -> None:
    """Expecting some head where there is none is a mismatch too (actual None)."""
    a, b, _ = _stored(store, session)
    assert store.move_head("s1", "main", a, b).failure() == HeadMoved("s1", "main", a, None)
    assert store.get_head("s1") == Success(None)


def test_a_head_must_point_at_a_stored_node(store: Store, session: Session) -> None:
    """Moving a head to a node the session lacks is refused as an unknown node."""
    _stored(store, session)
    failure = store.move_head("s1", "main", None, "n_missing").failure()
    assert failure == DagRefused("s1", UnknownNode("n_missing", "head"))


def test_of_two_movers_that_saw_the_same_head_one_wins(
    store_url: str, store: Store, session: Session
) -> None:
    """Two connections read the same head; the first CAS wins, the second sees the winner."""
    a, b, c = _stored(store, session)
    store.move_head("s1", "main", None, a).unwrap()
    with open_store(store_url).unwrap() as other:
        seen_here, seen_there = store.get_head("s1").unwrap(), other.get_head("s1").unwrap()
        assert seen_here == seen_there == a
        assert other.move_head("s1", "main", seen_there, b) == Success(None)
        assert store.move_head("s1", "main", seen_here, c).failure() == HeadMoved(
            "s1", "main", a, b
        )
    assert store.get_head("s1") == Success(b)


def test_append_at_head_appends_and_moves_the_head(store: Store) -> None:
    """Each append on the current head lands with the next seq and becomes the head."""
    store.create_session("s").unwrap()
    assert store.append_at_head("s", Call("a", "user", output="1")) == Success(0)
    assert store.append_at_head("s", Call("b", "user", output="2", predecessor="a")) == Success(1)
    assert store.get_head("s") == Success("b")
    assert list(store.load_graph("s").unwrap().order) == ["a", "b"]


def test_append_at_head_on_a_stale_head_stores_nothing(store: Store) -> None:
    """A worker that saw an older head gets HeadMoved naming the new one; no fork is stored."""
    store.create_session("s").unwrap()
    store.append_at_head("s", Call("a", "user")).unwrap()
    store.append_at_head("s", Call("b", "user", predecessor="a")).unwrap()
    stale = store.append_at_head("s", Call("c", "user", predecessor="a")).failure()
    assert stale == HeadMoved("s", "main", "a", "b")
    assert list(store.load_graph("s").unwrap().order) == ["a", "b"]
    assert store.append_at_head("s", Call("c", "user", predecessor="b")) == Success(2)


def test_append_at_head_refuses_what_append_node_refuses(store: Store) -> None:
    """Unknown sessions, unknown reads and another node under a stored id fail, storing nothing."""
    store.create_session("s").unwrap()
    store.append_at_head("s", Call("a", "user", output="1")).unwrap()
    assert store.append_at_head("nope", Call("x", "user")).failure() == UnknownSession("nope")
    refused = store.append_at_head("s", Call("x", "user", predecessor="a", reads=("zz",)))
    assert refused.failure() == DagRefused("s", UnknownReads("x", ("zz",)))
    store.move_head("s", "main", "a", "a").unwrap()
    clash = store.append_at_head("s", Call("a", "user", output="other", predecessor="a"))
    assert clash.failure() == NodeConflict("s", "a")
    assert store.get_head("s") == Success("a")
    assert len(store.load_graph("s").unwrap()) == 1
