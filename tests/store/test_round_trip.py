"""What goes into the store comes back equal: graphs, sessions, commits, heads, usage."""

from __future__ import annotations

import attrs
from hypothesis import given, settings
from returns.result import Success

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Call, Session, graph_from_jsonl
from ctxrules.engine import DefaultContextEngine
from ctxrules.store import SessionInfo, SqliteStore, Store, UnknownSession
from ctxrules.testing import commits, sessions
from ctxrules.tokens.usage import ProviderUsage, UsageState


def test_graph_round_trips_through_append_graph(store: Store, session: Session) -> None:
    """A graph stored in one transaction loads back equal, seqs included."""
    store.create_session("s1").unwrap()
    assert store.append_graph("s1", session.graph) == Success(len(session.graph))
    assert store.load_graph("s1") == Success(session.graph)


def test_graph_round_trips_through_append_node(store: Store, session: Session) -> None:
    """Appending node by node in seq order returns each node's seq and loads back equal."""
    store.create_session("s1").unwrap()
    seqs = [store.append_node("s1", session.graph.nodes[i]).unwrap() for i in session.graph.order]
    assert seqs == list(range(len(session.graph)))
    assert store.load_graph("s1") == Success(session.graph)


def test_session_round_trips_with_head_and_running(store: Store, session: Session) -> None:
    """load_session gives back the graph, the stored head and the running nodes."""
    running = session.record_call(session.head, "ls", {"path": "."}, status="running").unwrap()
    store.create_session("s1").unwrap()
    store.append_graph("s1", running.graph).unwrap()
    store.move_head("s1", "main", None, running.head).unwrap()
    assert store.load_session("s1") == Success(running)
    assert store.load_session("s1").unwrap().running == running.running != set()


def test_session_without_head_loads_with_none(store: Store, session: Session) -> None:
    """A session whose head was never stored loads with head None, not with a guess."""
    store.create_session("s1").unwrap()
    store.append_graph("s1", session.graph).unwrap()
    assert store.load_session("s1").unwrap().head is None
    assert store.load_session("s1", head_name="other").unwrap().head is None


def test_append_graph_again_adds_only_what_is_new(store: Store, session: Session) -> None:
    """Storing a grown graph again adds only its new nodes and completes stored running ones."""
    store.create_session("s1").unwrap()
    started = session.record_call(session.head, "ls", {}, status="running").unwrap()
    store.append_graph("s1", started.graph).unwrap()
    tool = started.graph.order[-1]
    grown = started.complete(tool, ["a.py"]).bind(lambda s: s.send("assistant", "Done.")).unwrap()
    assert store.append_graph("s1", grown.graph) == Success(1)
    assert store.append_graph("s1", grown.graph) == Success(0)
    assert store.load_graph("s1") == Success(grown.graph)


def test_export_is_the_jsonl_interchange(store: Store, session: Session) -> None:
    """export_jsonl reads back with graph_from_jsonl to the stored graph."""
    store.create_session("s1").unwrap()
    store.append_graph("s1", session.graph).unwrap()
    text = store.export_jsonl("s1").unwrap()
    assert len(text.splitlines()) == len(session.graph)
    assert graph_from_jsonl(text) == Success(session.graph)


def test_sessions_are_listed_oldest_first(store: Store, session: Session) -> None:
    """list_sessions reports each session's row and node count, oldest first."""
    store.create_session("b", created_at=20.0, title="second", metadata={"k": [1]}).unwrap()
    store.create_session("a", created_at=10.0).unwrap()
    store.append_graph("b", session.graph).unwrap()
    listed = store.list_sessions().unwrap()
    assert [(s.id, s.created_at, s.title, s.node_count) for s in listed] == [
        ("a", 10.0, "", 0),
        ("b", 20.0, "second", len(session.graph)),
    ]
    assert isinstance(listed[1], SessionInfo)
    assert dict(listed[1].metadata)["k"][0] == 1


def test_create_session_is_idempotent_only_for_the_same_row(store: Store) -> None:
    """The same session again is a no-op; another title under the id is SessionExists."""
    assert store.create_session("s", created_at=1.0, title="t") == Success(None)
    assert store.create_session("s", created_at=1.0, title="t") == Success(None)
    failed = store.create_session("s", created_at=1.0, title="other").failure()
    assert failed.message == (
        "session 's' already exists with a different created_at, title or metadata"
    )


def test_unknown_session_fails_everywhere(store: Store) -> None:
    """Every per-session operation on a session never created fails with UnknownSession."""
    node = Call("n", "user")
    results = [
        store.append_node("nope", node),
        store.append_graph("nope", Session("nope").graph),
        store.complete_node("nope", "n", 1),
        store.load_graph("nope"),
        store.load_session("nope"),
        store.export_jsonl("nope"),
        store.commits_for("nope"),
        store.get_head("nope"),
        store.move_head("nope", "main", None, "n"),
        store.search("x", session_id="nope"),
        store.put_commit(ContextCommit("nope")),
    ]
    assert [r.failure() for r in results] == [UnknownSession("nope")] * len(results)


def test_commits_round_trip_in_stored_order(store: Store) -> None:
    """Commits come back equal, by id and per session in the order they were stored."""
    store.create_session("s").unwrap()
    first = ContextCommit("s").append_items([ContextItem("u1", "user", rendered="hi", tokens=1)])
    second = attrs.evolve(
        first.append_items([ContextItem("a1", "assistant", rendered="yo", tokens=1)]),
        parent_ids=(first.id,),
    )
    for commit in (second, first):
        store.put_commit(commit).unwrap()
    assert store.get_commit(first.id) == Success(first)
    assert store.commits_for("s") == Success([second, first])


def test_heads_round_trip(store: Store, session: Session) -> None:
    """A moved head reads back; a head never moved reads as None."""
    store.create_session("s1").unwrap()
    store.append_graph("s1", session.graph).unwrap()
    assert store.get_head("s1") == Success(None)
    store.move_head("s1", "main", None, session.head).unwrap()
    store.move_head("s1", "draft", None, session.graph.order[0]).unwrap()
    assert store.get_head("s1") == Success(session.head)
    assert store.get_head("s1", "draft") == Success(session.graph.order[0])


def test_usage_round_trips_as_the_engine_expects(store: Store) -> None:
    """Saved usage loads back as UsageState.from_json would, and the engine starts from it."""
    usage = UsageState().record(ProviderUsage(1200, 30, 100), estimated_request=1100)
    assert store.load_usage("s") is None
    store.save_usage("s", usage)
    assert store.load_usage("s") == UsageState.from_json(usage.to_json())
    newer = usage.record_compaction()
    store.save_usage("s", newer)
    assert store.load_usage("s") == newer
    engine = DefaultContextEngine(store=store)
    engine.on_session_start("s")
    assert engine.states["s"].usage == newer


@settings(max_examples=25, deadline=None)
@given(session=sessions())
def test_any_generated_session_round_trips(session: Session) -> None:
    """Every session the public strategy builds (retries, edits, tool calls) loads back equal."""
    with SqliteStore.open(":memory:").unwrap() as store:
        store.create_session(session.session_id).unwrap()
        store.append_graph(session.session_id, session.graph).unwrap()
        if session.head is not None:
            store.move_head(session.session_id, "main", None, session.head).unwrap()
        assert store.load_session(session.session_id) == Success(session)


@settings(max_examples=25, deadline=None)
@given(commit=commits())
def test_any_generated_commit_round_trips(commit: ContextCommit) -> None:
    """Every commit the public strategy builds is stored once and read back equal by id."""
    with SqliteStore.open(":memory:").unwrap() as store:
        store.create_session(commit.session_id).unwrap()
        store.put_commit(commit).unwrap()
        store.put_commit(commit).unwrap()
        assert store.get_commit(commit.id) == Success(commit)
        assert store.commits_for(commit.session_id) == Success([commit])
