"""Behaviour of the DAG walks on small hand-built sessions."""

from __future__ import annotations

from ctxrules.dag import (
    Session,
    branch_internal,
    branch_terminals,
    compute_reads,
    fold_history,
    last_user_message,
    linear_back_to,
    siblings,
)


def _two_turns() -> Session:
    return (
        Session("w")
        .send("user", "q1")
        .bind(lambda s: s.send("assistant", "thinking"))
        .bind(lambda s: s.send("assistant", "a1"))
        .bind(lambda s: s.send("user", "q2"))
        .bind(lambda s: s.send("assistant", "partial"))
        .unwrap()
    )


def test_fold_history_keeps_user_and_final_reply_of_earlier_turns() -> None:
    """Earlier turns fold to (user, final assistant); the current turn stays whole."""
    session = _two_turns()
    assert [c.output for c in fold_history(session.graph, session.head)] == [
        "q1",
        "a1",
        "q2",
        "partial",
    ]


def test_last_user_message_is_on_the_heads_branch() -> None:
    """The nearest user message is found by walking back from the head, not by global seq."""
    session = _two_turns()
    first_reply = session.graph.order[1]
    edited = session.checkout(first_reply).unwrap()
    last = last_user_message(edited.graph, edited.head)
    assert last is not None
    assert last.output == "q1"
    assert last_user_message(session.graph, session.head).output == "q2"  # type: ignore[union-attr]


def test_linear_back_to_lists_everything_appended_since() -> None:
    """linear_back_to returns the target and all later nodes in seq order."""
    session = _two_turns()
    target = session.graph.order[2]
    assert [c.output for c in linear_back_to(session.graph, target)] == ["a1", "q2", "partial"]
    assert linear_back_to(session.graph, "ghost") == ()


def test_siblings_include_retries_in_seq_order() -> None:
    """A retried node and its retries are siblings, oldest first."""
    session = _two_turns()
    last = session.head
    retried = session.retry(last).bind(lambda s: s.edit(last, "other")).unwrap()
    assert [c.output for c in siblings(retried.graph, last)] == ["partial", "partial", "other"]


def test_branch_terminals_and_internal_follow_spawned_branches() -> None:
    """Each branch spawned by a node ends at its newest descendant; internal lists it in order."""
    base = Session("w").send("user", "go").bind(lambda s: s.send("assistant", "spawning")).unwrap()
    spawn = base.head
    with_agents = (
        base.record_call(spawn, "agent", {"task": "a"}, role="user")
        .bind(lambda s: s.record_call(spawn, "agent", {"task": "b"}, role="user"))
        .unwrap()
    )
    first, second = with_agents.graph.callees_of(spawn)
    # Continue the first spawned branch by checking out its start and sending after it.
    grown = (
        with_agents.checkout(first)
        .bind(lambda s: s.send("assistant", "a-step-1"))
        .bind(lambda s: s.send("assistant", "a-done"))
        .unwrap()
    )
    terminals = branch_terminals(grown.graph, spawn)
    assert [t.output for t in terminals] == ["a-done", None]
    assert terminals[1].id == second
    internal = branch_internal(grown.graph, spawn, terminals[0].id)
    assert [c.output for c in internal] == [None, "a-step-1", "a-done"]
    assert internal[0].id == first
    assert branch_internal(grown.graph, "not-a-spawn", terminals[0].id) == ()


def _framed() -> tuple[Session, str, str]:
    s = (
        Session("f")
        .send("user", "run it")
        .bind(lambda s: s.send("assistant", "calling fn"))
        .unwrap()
    )
    caller = s.head
    s = s.record_call(caller, "fn", {"x": 1}, status="running").unwrap()
    frame = s.graph.order[-1]
    s = s.record_call(frame, "model", {"prompt": "inner"}, "inner reply", role="assistant").unwrap()
    return s, caller, frame


def test_compute_reads_top_level_sees_all_but_hidden_inner_llm_calls() -> None:
    """At top level, an expose='io' function's inner LLM calls are not read."""
    session, _, frame = _framed()
    inner = session.graph.order[-1]
    reads = compute_reads(session.graph, head_seq=len(session.graph) - 1)
    assert inner not in reads
    assert frame in reads
    assert list(reads) == [i for i in session.graph.order if i != inner]


def test_compute_reads_expose_full_keeps_inner_calls() -> None:
    """expose='full' keeps the function's inner LLM calls visible."""
    s = Session("f").send("user", "run").unwrap()
    s = s.record_call(s.head, "fn", {}, metadata={"expose": "full"}).unwrap()
    fn = s.graph.order[-1]
    s = s.record_call(fn, "model", {}, "inner", role="assistant").unwrap()
    assert compute_reads(s.graph, head_seq=2) == tuple(s.graph.order)


def test_compute_reads_inside_a_frame_sees_its_own_progress() -> None:
    """Inside a frame the frame's own inner calls are read, and callers/subcalls limit the window."""
    session, _, frame = _framed()
    frame_seq = session.graph.nodes[frame].seq
    head_seq = len(session.graph) - 1
    everything = compute_reads(session.graph, head_seq, frame_entry_seq=frame_seq)
    assert everything == tuple(session.graph.order)
    isolated = compute_reads(session.graph, head_seq, frame_seq, {"callers": 0})
    assert isolated == tuple(session.graph.order[frame_seq:])
    one_caller = compute_reads(session.graph, head_seq, frame_seq, {"callers": 1, "subcalls": 1})
    assert one_caller == (session.graph.order[frame_seq - 1], session.graph.order[-1])
    too_many = compute_reads(session.graph, head_seq, frame_seq, {"callers": 99})
    assert too_many == everything
