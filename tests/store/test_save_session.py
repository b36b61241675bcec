"""save_session: a whole session with its head, commits and usage in one transaction."""

from __future__ import annotations

import attrs
from returns.result import Success

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Session
from ctxrules.store import HeadMoved, Store
from ctxrules.tokens.usage import ProviderUsage, UsageState


def _chain(session_id: str, length: int) -> list[ContextCommit]:
    chain = [ContextCommit(session_id, summary="0")]
    for i in range(1, length):
        chain.append(ContextCommit(session_id, parent_ids=(chain[-1].id,), summary=str(i)))
    return chain


def test_a_saved_session_loads_back_whole(store: Store, session: Session) -> None:
    """Nodes, head, commits (parents first, whatever the order given) and usage all land."""
    chain = _chain("s1", 4)
    usage = UsageState().record(ProviderUsage(500, 20), estimated_request=480)
    saved = store.save_session(session, commits=reversed(chain), usage=usage, title="t")
    assert saved == Success(len(session.graph))
    assert store.load_session("s1") == Success(session)
    assert store.commits_for("s1") == Success(chain)
    assert store.load_usage("s1") == UsageState.from_json(usage.to_json())
    assert [s.title for s in store.list_sessions().unwrap()] == ["t"]


def test_saving_again_adds_nothing(store: Store, session: Session) -> None:
    """A second save of the same session is a no-op; a grown one adds only the new nodes."""
    store.save_session(session).unwrap()
    assert store.save_session(session) == Success(0)
    grown = session.send("assistant", "Use PyYAML.").unwrap()
    assert store.save_session(grown, expected_head=session.head) == Success(1)
    assert store.load_session("s1") == Success(grown)


def test_a_save_over_another_head_changes_nothing(store: Store, session: Session) -> None:
    """If the stored head is not the one expected, the whole save rolls back with HeadMoved."""
    store.save_session(session).unwrap()
    grown = session.send("assistant", "Use PyYAML.").unwrap()
    extra = ContextCommit("s1", summary="late")
    failure = store.save_session(grown, commits=[extra], expected_head="n_stale").failure()
    assert failure == HeadMoved("s1", "main", "n_stale", session.head)
    assert store.load_session("s1") == Success(session)
    assert store.commits_for("s1") == Success([])


def test_commits_of_a_diamond_are_stored_parents_first(store: Store, session: Session) -> None:
    """A merge commit is stored after both parents even when given first."""
    base = ContextCommit("s1", summary="base")
    left = ContextCommit("s1", parent_ids=(base.id,), summary="left")
    right = ContextCommit("s1", parent_ids=(base.id,), summary="right")
    merge = attrs.evolve(
        ContextCommit("s1", summary="merge"), parent_ids=(left.id, right.id)
    ).append_items([ContextItem("x", "user", tokens=1)])
    store.save_session(session, commits=[merge, right, left, base]).unwrap()
    stored = [c.summary for c in store.commits_for("s1").unwrap()]
    assert stored[0] == "base"
    assert stored[-1] == "merge"
    assert sorted(stored[1:3]) == ["left", "right"]
