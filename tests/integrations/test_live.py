"""`LiveSession`: a framework's list kept in step with the DAG, rewrites as branches, saved."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrules.dag import Role
from ctxrules.importers.messages import Message, ToolRequest
from ctxrules.integrations.live import Entry, LiveSession, result_key
from ctxrules.store import SqliteStore

USER = Entry("u1", Message("list the files", Role.USER))
CALL = Entry("a1", Message("", Role.ASSISTANT, tool_calls=(ToolRequest("c1", "ls", {}),)))
RESULT = Entry(result_key("c1"), Message("a.py", result_for="c1"))
ANSWER = Entry("a2", Message("one file", Role.ASSISTANT))


def _rows(live: LiveSession) -> list[tuple[object, ...]]:
    graph = live.session.graph
    rows: list[tuple[object, ...]] = []
    for call in live.session.branch():
        rows.append((call.role.value, call.output))
        rows.extend(
            (graph.nodes[c].name, graph.nodes[c].output, graph.nodes[c].status.value)
            for c in graph.callees_of(call.id)
        )
    return rows


def test_sync_appends_only_what_is_new() -> None:
    """Syncing a grown list adds its tail; syncing it again adds nothing (invariant 1)."""
    live = LiveSession.open("s", None).unwrap()
    live.sync([USER, CALL]).unwrap()
    before = len(live.session.graph.order)
    live.sync([USER, CALL, RESULT, ANSWER]).unwrap()
    live.sync([USER, CALL, RESULT, ANSWER]).unwrap()
    assert len(live.session.graph.order) == before + 1
    assert _rows(live) == [
        ("user", "list the files"),
        ("assistant", ""),
        ("ls", "a.py", "done"),
        ("assistant", "one file"),
    ]


def test_a_rewritten_list_becomes_a_branch_and_the_old_one_stays() -> None:
    """Dropping the tool result restarts the branch before its call; the DAG keeps both."""
    live = LiveSession.open("s", None).unwrap()
    live.sync([USER, CALL, RESULT, ANSWER]).unwrap()
    old_nodes = set(live.session.graph.nodes)
    live.sync([USER, CALL]).unwrap()
    assert _rows(live) == [("user", "list the files"), ("assistant", ""), ("ls", None, "running")]
    assert old_nodes < set(live.session.graph.nodes)
    live.sync([]).unwrap()
    assert [c.output for c in live.session.branch()] == [""]


def test_a_result_for_an_unknown_call_is_kept_as_text() -> None:
    """A tool result whose call was never seen is not dropped: the model reads it as text."""
    live = LiveSession.open("s", None).unwrap()
    live.sync([USER, Entry(result_key("zz"), Message("late", result_for="zz"))]).unwrap()
    assert _rows(live)[-1] == ("user", "[tool result zz] late")


def test_saved_sessions_reload_with_their_keys(tmp_path) -> None:
    """A reopened session knows what was synced: the same list adds nothing, a longer one its tail."""
    store = SqliteStore.open(str(tmp_path / "s.sqlite"), synchronous="NORMAL").unwrap()
    live = LiveSession.open("s", store).unwrap()
    live.sync([USER, CALL]).unwrap()
    live.save().unwrap()
    live.sync([USER, CALL, RESULT]).unwrap()
    live.save().unwrap()
    again = LiveSession.open("s", store).unwrap()
    assert again.keys == live.keys
    again.sync([USER, CALL, RESULT, ANSWER]).unwrap()
    again.save().unwrap()
    assert _rows(LiveSession.open("s", store).unwrap()) == [*_rows(live), ("assistant", "one file")]
    store.close()


_TEXTS = st.sampled_from(["a", "b", "c"])
_ENTRIES = st.lists(
    st.tuples(_TEXTS, st.sampled_from([Role.USER, Role.ASSISTANT])), max_size=6
).map(lambda rows: [Entry(f"{role.value}:{text}", Message(text, role)) for text, role in rows])


@settings(max_examples=150, deadline=None)
@given(first=_ENTRIES, then=_ENTRIES, keep=st.integers(min_value=0, max_value=6))
def test_sync_after_keeps_the_first_entries_and_makes_the_rest_the_list(
    first: list[Entry], then: list[Entry], keep: int
) -> None:
    """Invariant 1: after ``sync_after(keep, then)`` the branch is ``first[:keep] + then``.

    Entries already synced in that order stay the same nodes; the DAG only grows, and
    syncing the same list again adds nothing.
    """
    keep = min(keep, len(first))
    live = LiveSession.open("s", None).unwrap()
    live.sync(first).unwrap()
    nodes_before = set(live.session.graph.nodes)
    kept_heads = live.heads[:keep]
    live.sync_after(keep, then).unwrap()
    expected = [*first[:keep], *then]
    assert live.keys == [entry.key for entry in expected]
    # A list rewound to nothing starts from an empty system node (the old branch stays).
    branch = [call.output for call in live.session.branch() if call.role is not Role.SYSTEM]
    assert branch == [entry.message.text for entry in expected]
    assert live.heads[:keep] == kept_heads
    assert nodes_before <= set(live.session.graph.nodes)
    grown = len(live.session.graph.nodes)
    live.sync_after(keep, then).unwrap()
    assert len(live.session.graph.nodes) == grown


def _turn(n: int, call_id: str) -> list[Entry]:
    """A turn whose call has ``call_id`` (a server that numbers every reply's calls from 0)."""
    call = Message("", Role.ASSISTANT, tool_calls=(ToolRequest(call_id, "ls", {"n": n}),))
    return [
        Entry(f"u{n}", Message(f"step {n}", Role.USER)),
        Entry(f"a{n}", call),
        Entry(result_key(call_id), Message(f"out {n}", result_for=call_id)),
    ]


def test_a_reused_call_id_is_recorded_fresh_and_its_result_found_after_a_reload(
    tmp_path,
) -> None:
    """Each call under one id gets its own, and its result, also after reopening the store."""
    store = SqliteStore.open(str(tmp_path / "s.sqlite"), synchronous="NORMAL").unwrap()
    live = LiveSession.open("s", store).unwrap()
    waiting = [*_turn(0, "call_0"), *_turn(1, "call_0"), *_turn(2, "call_0")[:2]]
    live.sync(waiting).unwrap()
    live.save().unwrap()
    again = LiveSession.open("s", store).unwrap()
    # The third call's result comes after the reload, under the id the framework has.
    again.sync([*waiting, _turn(2, "call_0")[2]]).unwrap()
    graph = again.session.graph
    calls = [graph.nodes[c] for n in again.session.branch() for c in graph.callees_of(n.id)]
    assert [c.metadata["tool_call_id"] for c in calls] == ["call_0", "call_0_2", "call_0_3"]
    assert [c.output for c in calls] == ["out 0", "out 1", "out 2"]
    assert [c.status.value for c in calls] == ["done"] * 3
    store.close()


class _CountingIds(dict[str, int]):
    """``recorded_at`` counting the entries a rewind reads."""

    read = 0

    def items(self):  # type: ignore[override]
        outer = self

        class _View:
            def __iter__(self):  # type: ignore[no-untyped-def]
                for pair in dict.items(outer):
                    outer.read += 1
                    yield pair

            def __reversed__(self):  # type: ignore[no-untyped-def]
                for pair in reversed(dict.items(outer)):
                    outer.read += 1
                    yield pair

        return _View()


def test_a_rewind_reads_the_calls_it_frees_not_every_call() -> None:
    """Popping the last turn of 500 frees its one call id after reading two entries, not 500."""
    live = LiveSession.open("s", None).unwrap()
    entries = [entry for n in range(500) for entry in _turn(n, f"c{n}")]
    live.sync(entries).unwrap()
    live.recorded_at = _CountingIds(live.recorded_at)
    live.sync(entries[:-3]).unwrap()
    assert live.recorded_at.read <= 2
    assert "c499" not in live.recorded_at
    assert len(live.recorded_at) == 499
    # The freed id is free again: the turn synced anew records its call under it.
    live.sync(entries).unwrap()
    assert live.recorded_at["c499"] == len(live.keys) - 2
