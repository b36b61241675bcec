"""A state machine of whole sessions that checks every invariant after every step.

``session_machine(pipeline)`` returns a Hypothesis `RuleBasedStateMachine` for a user's own
pipeline: two sessions send, call tools, retry, edit, check out, attach and merge, the
clock advances, commits are built with the pipeline, and compaction runs with summarizers
that succeed, raise, return garbage or are cancelled.
"""

from __future__ import annotations

import attrs
import hypothesis.strategies as st
from hypothesis import event
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from pyrsistent import pmap
from returns.result import Failure

from ctxrules.check import (
    Violation,
    append_only,
    attached_once,
    attached_traceable,
    checkout_pure,
    compaction_step,
    content_addressed,
    multi_parent_from_merge,
    nothing_lost,
    one_ruler,
    one_summary,
    protocol_valid,
    render_pure,
    rule_step,
    summaries_outside_dag,
)
from ctxrules.commit import ContextCommit
from ctxrules.compaction import CutParams, compact
from ctxrules.dag import Session
from ctxrules.generation import CommitMap, ensure_latest_commit
from ctxrules.render import render_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.testing.compaction import FakeSummarizer
from ctxrules.tokens import HeuristicCounter, Tokenizer

NAMES = ("s_main", "s_peer")
TEXTS = st.sampled_from(
    ["fix src/parser.py", "ok", "运行测试 again", "see `make lint` 0xdeadbeef", "log line\n" * 300]
)
BEHAVIOURS = st.sampled_from(["ok", "raise", "blank", "garbage", "non_text", "cancelled"])


def commit_violations(
    commit: ContextCommit,
    parent: ContextCommit | None,
    session: Session,
    known: dict[str, ContextCommit],
    tokenizer: Tokenizer,
) -> list[Violation]:
    """Every invariant a freshly built commit must keep, against its parent and its session."""
    found = content_addressed(commit) + render_pure(commit) + one_ruler(commit, tokenizer)
    found += protocol_valid(render_commit(commit)) + one_summary(commit) + attached_once(commit)
    found += attached_traceable(commit, known) + nothing_lost(commit, session.graph)
    found += summaries_outside_dag(commit, session.graph) + multi_parent_from_merge(
        commit, session.graph, known
    )
    if parent is not None and parent.id in commit.parent_ids:
        prefix = attrs.evolve(commit, items=commit.items[: len(parent.items)], digest=-1)
        found += rule_step(parent, prefix)
    return found


def require(violations: list[Violation]) -> None:
    """Fail the step with every violation's message (how a state machine reports a break)."""
    if violations:
        raise AssertionError("\n".join(v.message for v in violations))


def session_machine(  # noqa: C901 - the rules of the machine are defined inside it
    pipeline: Pipeline, *, window: int = 16_000, tokenizer: Tokenizer | None = None
) -> type[RuleBasedStateMachine]:
    """A state machine for ``pipeline``; use ``session_machine(p).TestCase`` in a test module."""
    ruler = tokenizer or HeuristicCounter()

    class SessionMachine(RuleBasedStateMachine):
        """Two sessions under ``pipeline``; every invariant is checked after every step."""

        def __init__(self) -> None:
            super().__init__()
            self.sessions = {name: Session(name) for name in NAMES}
            self.by_head: dict[str, CommitMap] = {name: pmap() for name in NAMES}
            self.latest: dict[str, ContextCommit] = {}
            self.known: dict[str, ContextCommit] = {}
            self.now = 0.0

        def _apply(self, name: str, result: object) -> None:
            if isinstance(result, Failure):
                return
            before = self.sessions[name]
            after = result.unwrap()  # type: ignore[attr-defined]
            require(append_only(before.graph, after.graph))
            self.sessions[name] = after

        @rule(
            name=st.sampled_from(NAMES),
            role=st.sampled_from(["user", "assistant"]),
            text=TEXTS,
            tool=st.booleans(),
        )
        def send(self, name: str, role: str, text: str, tool: bool) -> None:
            """Send a message, with a tool call under an assistant reply sometimes."""
            result = self.sessions[name].send(role, text, created_at=self.now)
            if tool and role == "assistant" and not isinstance(result, Failure):
                head = result.unwrap().head or ""
                result = result.unwrap().record_call(
                    head, "grep", {"q": text[:12]}, text * 4, created_at=self.now
                )
            self._apply(name, result)

        @rule(name=st.sampled_from(NAMES), data=st.data(), edit=st.booleans(), text=TEXTS)
        def retry_or_edit(self, name: str, data: st.DataObject, edit: bool, text: str) -> None:
            """Retry or edit a node on the branch."""
            # Conversation nodes only: a tool call retried under an assistant that already has
            # a commit is not picked up by that commit (a documented limitation).
            branch = [c for c in self.sessions[name].branch() if c.caller is None]
            if branch:
                target = data.draw(st.sampled_from([c.id for c in branch]))
                session = self.sessions[name]
                self._apply(name, session.edit(target, text) if edit else session.retry(target))

        @rule(name=st.sampled_from(NAMES), data=st.data())
        def checkout(self, name: str, data: st.DataObject) -> None:
            """Invariant 9: check out a node; nothing is appended or rerun."""
            session = self.sessions[name]
            if session.graph.order:
                moved = session.checkout(
                    data.draw(st.sampled_from(list(session.graph.order)))
                ).unwrap()
                require(checkout_pure(session, moved))
                self.sessions[name] = moved

        @rule(seconds=st.floats(1, 7200))
        def advance_clock(self, seconds: float) -> None:
            """Time passes (rules see it only through Facts.now)."""
            self.now += seconds

        @rule(name=st.sampled_from(NAMES))
        def build_commit(self, name: str) -> None:
            """Run the pipeline for the head and check the commit against every invariant."""
            session = self.sessions[name]
            if session.head is None:
                return
            parent = self.latest.get(name)
            facts = Facts(now=self.now, context_window=window, tokenizer=ruler)
            built = ensure_latest_commit(
                self.by_head[name],
                session.graph,
                session.head,
                pipeline,
                facts,
                session_id=name,
                sources=self.known,
            )
            commit, self.by_head[name] = built.unwrap()
            self.known[commit.id] = commit
            if len(commit.parent_ids) > 1:
                event("merge commit")
            require(commit_violations(commit, parent, session, self.known, ruler))
            self.latest[name] = commit

        @precondition(lambda self: self.latest)
        @rule(name=st.sampled_from(NAMES), behaviour=BEHAVIOURS, keep=st.integers(1, 600))
        def compact_head(self, name: str, behaviour: str, keep: int) -> None:
            """Compact the latest commit; invariants 3, 4, 5, 10, 12, 13, 14 hold whatever the summarizer did."""
            commit = self.latest.get(name)
            session = self.sessions[name]
            if (
                commit is None
                or commit.head_node_id is None
                or commit.head_node_id not in session.graph
            ):
                return
            summarizer = FakeSummarizer(behaviour)  # type: ignore[arg-type]
            facts = Facts(now=self.now, context_window=window, tokenizer=ruler)
            result = compact(
                commit,
                summarizer,
                facts,
                params=CutParams(
                    keep_recent_tokens=keep,
                    protect_first_n=1,
                    protect_last_n=1,
                    keep_min_messages=1,
                ),
            )
            view = Session(name, session.graph, commit.head_node_id)
            require(compaction_step(commit, result, view.graph, ruler, len(summarizer.calls)))
            event(f"compaction {result.outcome.value}")
            if result.applied:
                self.by_head[name] = self.by_head[name].set(commit.head_node_id, result.commit)
                self.known[result.commit.id] = result.commit
                self.latest[name] = result.commit

        @precondition(lambda self: self.latest)
        @rule(name=st.sampled_from(NAMES), data=st.data(), merge=st.booleans())
        def attach_or_merge(self, name: str, data: st.DataObject, merge: bool) -> None:
            """Attach the other session's latest commit, or merge it; refusals change nothing."""
            others = [c for s, c in sorted(self.latest.items()) if s != name]
            if not others:
                return
            source = data.draw(st.sampled_from(others))
            session = self.sessions[name]
            result = (
                session.merge([source], "Combine what the peer found.")
                if merge
                else session.attach(source)
            )
            self._apply(name, result)

        @invariant()
        def latest_commits_stay_content_addressed(self) -> None:
            """Invariant 2: no commit built so far has changed."""
            for commit in self.latest.values():
                require(content_addressed(commit))

    return SessionMachine
