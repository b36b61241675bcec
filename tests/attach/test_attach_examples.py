"""Attach and merge on small hand-built sessions: expansion, dedup, failures and bad input."""

from __future__ import annotations

import attrs
import pytest
from pyrsistent import pmap

from ctxrules.commit import ContextCommit
from ctxrules.commit.attach import CLOSE, OPEN
from ctxrules.dag import AttachRefused, Session
from ctxrules.generation import ensure_latest_commit
from ctxrules.render import render_commit, to_anthropic, to_openai
from ctxrules.rules import Facts, Pipeline
from ctxrules.tokens import HeuristicCounter

FACTS = Facts(now=10.0, tokenizer=HeuristicCounter())


def build(
    session: Session,
    sources: dict[str, ContextCommit] | None = None,
    pipeline: Pipeline | None = None,
) -> ContextCommit:
    """The commit for the session's head, built from scratch."""
    commit, _ = ensure_latest_commit(
        pmap(),
        session.graph,
        session.head,
        pipeline or Pipeline(),
        FACTS,
        session_id=session.session_id,
        sources=sources or {},
    ).unwrap()
    return commit


def peer(name: str, text: str) -> tuple[Session, ContextCommit]:
    """A session with one question, one tool call and one answer, and its commit."""
    s = (
        Session(name)
        .send("user", f"{name}: {text}")
        .bind(lambda s: s.send("assistant", "looking"))
        .unwrap()
    )
    s = s.record_call(
        s.head,
        "grep",
        {"q": text},
        f"{text} found in src/x.py",
        metadata={"tool_call_id": "call_1"},
    ).unwrap()
    s = s.send("assistant", f"{name} is done").unwrap()
    return s, build(s)


def test_attach_expands_the_source_between_markers() -> None:
    """The block opens and closes with markers; every item names the source commit."""
    _, source = peer("s_src", "alpha")
    target = Session("s_dst").send("user", "start").bind(lambda s: s.attach(source)).unwrap()
    commit = build(target, {source.id: source})
    block = [i for i in commit.items if i.attached_from == source.id]
    assert (block[0].reason, block[-1].reason) == (OPEN, CLOSE)
    assert [i.source_node_id for i in block[1:-1]] == [i.source_node_id for i in source.items]
    assert all(i.state.value == "full" and not i.locked for i in block)
    assert commit.attached == {source.id}


def test_attached_tool_calls_get_their_own_ids_and_render_without_orphans() -> None:
    """Copied tool calls are renamed per source, so two blocks of the same call never clash (invariant 11)."""
    _, one = peer("s_one", "alpha")
    _, two = peer("s_two", "alpha")
    target = (
        Session("s_dst")
        .send("user", "go")
        .bind(lambda s: s.attach(one))
        .bind(lambda s: s.attach(two))
        .unwrap()
    )
    commit = build(target, {one.id: one, two.id: two})
    ids = [i.tool_call_id for i in commit.items if i.is_tool]
    assert len(ids) == len(set(ids)) == 2
    messages = render_commit(commit)
    assert sum(1 for m in to_openai(messages) if m["role"] == "tool") == 2
    anthropic = to_anthropic(messages)
    uses = [b for m in anthropic.messages for b in m["content"] if b["type"] == "tool_use"]  # type: ignore[union-attr]
    assert len(uses) == 2


def test_the_same_source_attached_twice_expands_once() -> None:
    """Invariant 6: a second pointer to an expanded source adds nothing."""
    _, source = peer("s_src", "alpha")
    once = Session("s_dst").send("user", "go").bind(lambda s: s.attach(source)).unwrap()
    first = build(once, {source.id: source})
    twice = once.send("user", "again").bind(lambda s: s.attach(source)).unwrap()
    known = pmap({once.head: first})
    second, _ = ensure_latest_commit(
        known, twice.graph, twice.head, Pipeline(), FACTS, sources={source.id: source}
    ).unwrap()
    assert [i.reason for i in second.items].count(OPEN) == 1
    assert len(second.items) == len(first.items) + 1


def test_an_unloadable_source_becomes_one_user_item() -> None:
    """A pointer whose commit cannot be found renders as one user message saying so."""
    _, source = peer("s_src", "alpha")
    target = Session("s_dst").send("user", "go").bind(lambda s: s.attach(source)).unwrap()
    commit = build(target, {})
    last = commit.items[-1]
    assert (last.role.value, last.reason) == ("user", "attach_failed")
    assert (
        last.rendered == f"[attach failed: commit {source.id} of session s_src could not be loaded]"
    )


def test_a_different_rules_version_is_allowed_and_recorded() -> None:
    """Attaching a commit built by other rules works; the pointer and the block record it."""
    _, source = peer("s_src", "alpha")
    other = attrs.evolve(source, rules_version="v-other")
    target = Session("s_dst").send("user", "go").bind(lambda s: s.attach(other)).unwrap()
    pointer = target.graph.nodes[target.head]
    assert pointer.metadata["rules_version"] == "v-other"
    opening = next(i for i in build(target, {other.id: other}).items if i.reason == OPEN)
    assert "built by rules v-other" in opening.rendered


def test_merge_writes_pointers_and_an_instruction_and_makes_a_multi_parent_commit() -> None:
    """Invariant 7: the merge commit's parents are the target's previous commit and the peers."""
    _, base = peer("s_a", "alpha")
    _, other = peer("s_b", "beta")
    target = Session("s_dst").send("user", "go").unwrap()
    before, known = ensure_latest_commit(
        pmap(), target.graph, target.head, Pipeline(), FACTS
    ).unwrap()
    merged = target.merge([base, other], "Combine both.").unwrap()
    roles = [(c.role.value, c.name) for c in merged.branch()]
    assert roles == [("user", ""), ("system", "attach"), ("system", "attach"), ("user", "merge")]
    assert (
        merged.graph.nodes[merged.head].metadata_value()["merged_heads"][0]["head"]
        == base.head_node_id
    )
    commit, _ = ensure_latest_commit(
        known,
        merged.graph,
        merged.head,
        Pipeline(),
        FACTS,
        sources={base.id: base, other.id: other},
    ).unwrap()
    assert commit.parent_ids == (before.id, base.id, other.id)
    locked = {i.attached_from for i in commit.items if i.locked}
    assert locked == {base.id}


BAD = [
    (
        "no peers",
        lambda s, _a, _b: s.merge([], "x"),
        "cannot attach 'merge': a merge needs at least one peer",
    ),
    (
        "same peer twice",
        lambda s, a, _b: s.merge([a, a], "x"),
        "cannot attach 'merge': the same peer commit is named twice",
    ),
]


@pytest.mark.parametrize(("operation", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_merges_fail_and_change_nothing(operation: object, message: str) -> None:
    """A merge with no peers or a repeated peer is refused with a clear message."""
    _, a = peer("s_a", "alpha")
    _, b = peer("s_b", "beta")
    target = Session("s_dst").send("user", "go").unwrap()
    result = operation(target, a, b)  # type: ignore[operator]
    assert str(result.failure()) == message
    assert len(target.graph) == 1


def test_attaching_or_merging_with_itself_is_refused() -> None:
    """A session cannot attach or merge its own commit."""
    session, own = peer("s_self", "alpha")
    error = session.attach(own).failure()
    assert error == AttachRefused(
        own.id, "it is a commit of this session (s_self); check out its head instead"
    )
    assert session.merge([own], "x").failure() == error


def test_a_cycle_is_refused() -> None:
    """Attaching a commit that already holds a block attached from this session is a cycle."""
    a_session, a_commit = peer("s_a", "alpha")
    b_session = Session("s_b").send("user", "go").bind(lambda s: s.attach(a_commit)).unwrap()
    b_commit = build(b_session, {a_commit.id: a_commit})
    error = a_session.attach(b_commit).failure()
    assert (
        str(error)
        == f"cannot attach {b_commit.id!r}: it already holds a block attached from this session (s_a): a cycle"
    )
