"""The first step of a turn: the commit for the session's head, and what the new nodes cite."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

import attrs
from returns.result import Failure

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.dag import Session, ancestors
from ctxrules.engine.turn import SessionState
from ctxrules.generation import branch_items, ensure_latest_commit, new_branch_nodes
from ctxrules.rules import Facts, Pipeline, ReferenceTracker


def head_commit(
    state: SessionState,
    session: Session,
    pipeline: Pipeline,
    facts: Facts,
    sources: Mapping[str, ContextCommit] | None = None,
) -> tuple[ContextCommit, ContextCommit | None, SessionState]:
    """The head's commit, the commit it was built from (None at the start), the new state.

    The commit is reused when the head has one, else generated from the nearest commit on
    the head's branch with ``facts`` citing what the new nodes mention; ``sources`` are
    commits an attach pointer may expand, beside the session's own. ``session.head`` is set.
    """
    head = session.head
    assert head is not None  # noqa: S101 - the engine checks it before the turn starts
    commits = state.commits
    if (built_before := commits.get(head)) is not None and answered_since(built_before, session):
        # Built while a call of the head waited: its result came since, and the commit
        # shows it empty. Built again from the commit before, which would otherwise carry
        # the empty result into every later request.
        commits = commits.delete(head)
    parent = next(
        (commits[c.id] for c in ancestors(session.graph, head) if c.id in commits),
        None,
    )
    # No per-turn copy of the session's commits: the few given sources go on top.
    known = state.by_id.update(sources) if sources else state.by_id
    if pipeline.pins:
        # A pin may test ``cited`` as an item arrives: the tracker reads the new nodes first.
        references = observe_new_nodes(
            state.references, session, parent, lambda item: pipeline.on_arrival(item, facts)
        )
        built = ensure_latest_commit(
            commits,
            session.graph,
            head,
            pipeline,
            attrs.evolve(facts, cited=references.cited),
            session_id=session.session_id,
            sources=known,
        )
    else:
        # The tracker reads what will be sent, once: the new items as the generation
        # appended them (capped and counted), before the rules that ask what is cited.
        read = [state.references]

        def cite(items: Sequence[ContextItem]) -> Collection[str]:
            read[0] = state.references.observe(items)
            return read[0].cited

        built = ensure_latest_commit(
            commits,
            session.graph,
            head,
            pipeline,
            attrs.evolve(facts, cited=state.references.cited),
            session_id=session.session_id,
            sources=known,
            cite=cite,
        )
        references = read[0] if read[0] is not state.references else state.references.observe(())
    commit, commits = built.unwrap()  # the head is in the graph, so this cannot fail
    grown = attrs.evolve(
        state,
        commits=commits,
        by_id=state.by_id.set(commit.id, commit),
        references=references,
        observed_head=head,
        head=head,
    )
    return commit, parent, grown


def answered_since(commit: ContextCommit, session: Session) -> bool:
    """Whether a call of ``commit``'s head has a result the commit shows empty (it came later).

    Reads the head's calls and the commit's last items only: O(calls of the head).
    """
    head = commit.head_node_id
    callees = session.graph.callees_of(head) if head is not None else ()
    done = [c for c in callees if c not in session.running]
    if not done:
        return False
    items = commit.items
    last = {
        items[i].source_node_id: items[i]
        for i in range(max(len(items) - len(callees) - 1, 0), len(items))
    }
    nodes = session.graph.nodes
    return any(
        (item := last.get(callee)) is not None
        and item.rendered == ""
        and nodes[callee].output not in (None, "")
        for callee in done
    )


def observe_new_nodes(
    tracker: ReferenceTracker,
    session: Session,
    parent: ContextCommit | None,
    arrive: Callable[[ContextItem], ContextItem] | None = None,
) -> ReferenceTracker:
    """``tracker`` after reading the nodes on the head's branch that ``parent`` does not hold.

    Built once per turn from the new nodes only, so the gates see what the newest messages
    cite at the cost of their own length. ``arrive`` gives each new item as it will be sent
    (capped): the middle a cap cuts is neither read nor cited, as the model never sees it.
    """
    start = parent.head_node_id if parent is not None else None
    new = new_branch_nodes(session.graph, start, session.head or "")
    calls = new.unwrap() if not isinstance(new, Failure) else ()
    # Tool results hang by caller: branch_items brings them in, so they can be cited.
    items = branch_items(session.graph, calls)
    return tracker.observe(items if arrive is None else map(arrive, items))
