"""A state machine of several sessions that send, retry, check out, attach and merge.

After every commit it checks invariants 4 (a merge's base block is locked and untouched by
the pipeline), 6 (each source expanded once), 7 (several parents only from a merge),
10, 11, 12 and 13 (every attached item traceable to its source commit and node).
"""

from __future__ import annotations

from pathlib import Path

import hypothesis.strategies as st
from hypothesis import event, settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from pyrsistent import pmap
from returns.result import Failure

from ctxrules.check import (
    attached_once,
    attached_traceable,
    multi_parent_from_merge,
    one_ruler,
    one_summary,
    protocol_valid,
)
from ctxrules.commit import ContextCommit
from ctxrules.commit.attach import CLOSE, OPEN
from ctxrules.dag import Session
from ctxrules.generation import ensure_latest_commit
from ctxrules.render import render_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.spec import load_spec
from ctxrules.tokens import HeuristicCounter

SPECS = Path(__file__).resolve().parents[2] / "specs"
DEFAULT = load_spec(SPECS / "default.toml").unwrap()
SMALL = load_spec(SPECS / "small-window.toml").unwrap()
RULER = HeuristicCounter()
NAMES = ("s_a", "s_b", "s_c")
TEXT = st.sampled_from(["look at src/app.py", "done", "运行测试", "the 0badc0ffee id", "x" * 900])


class AttachMachine(RuleBasedStateMachine):
    """Three sessions exchanging context; the commits are checked after every step."""

    def __init__(self) -> None:
        super().__init__()
        self.sessions = {name: Session(name) for name in NAMES}
        self.by_head = {name: pmap() for name in NAMES}
        self.commits: dict[str, ContextCommit] = {}
        self.latest: dict[str, ContextCommit] = {}
        self.now = 0.0

    def _commit(self, name: str, pipeline: Pipeline = DEFAULT) -> ContextCommit | None:
        session = self.sessions[name]
        if session.head is None:
            return None
        self.now += 100.0
        facts = Facts(now=self.now, tokenizer=RULER)
        commit, known = ensure_latest_commit(
            self.by_head[name],
            session.graph,
            session.head,
            pipeline,
            facts,
            session_id=name,
            sources=self.commits,
        ).unwrap()
        self.by_head[name] = known
        self.commits[commit.id] = commit
        self.latest[name] = commit
        return commit

    @rule(
        name=st.sampled_from(NAMES),
        role=st.sampled_from(["user", "assistant"]),
        text=TEXT,
        tool=st.booleans(),
    )
    def send(self, name: str, role: str, text: str, tool: bool) -> None:
        """Send a message, sometimes with a tool call under an assistant reply."""
        session = self.sessions[name].send(role, text).unwrap()
        if tool and role == "assistant":
            session = session.record_call(session.head, "grep", {"q": text[:10]}, text * 3).unwrap()
        self.sessions[name] = session

    @rule(name=st.sampled_from(NAMES), data=st.data())
    def checkout_or_retry(self, name: str, data: st.DataObject) -> None:
        """Move the head to an earlier node, or retry it."""
        session = self.sessions[name]
        if not session.graph.order:
            return
        target = data.draw(
            st.sampled_from([c.id for c in session.branch()] or [session.graph.order[0]])
        )
        retry = data.draw(st.booleans())
        self.sessions[name] = (
            session.retry(target) if retry else session.checkout(target)
        ).unwrap()

    @rule(name=st.sampled_from(NAMES))
    def commit(self, name: str) -> None:
        """Build the commit for the head."""
        self._commit(name)

    @precondition(lambda self: self.latest)
    @rule(name=st.sampled_from(NAMES), data=st.data())
    def attach(self, name: str, data: st.DataObject) -> None:
        """Attach another session's latest commit; a cycle or self-attach is refused unchanged."""
        source = data.draw(st.sampled_from(sorted(self.latest.values(), key=lambda c: c.id)))
        before = self.sessions[name]
        result = before.attach(source)
        if source.session_id == name or any(
            i.source_node_id.startswith(f"attach:{name}:") for i in source.items
        ):
            assert isinstance(result, Failure)
            assert self.sessions[name] is before
            return
        self.sessions[name] = result.unwrap()
        event("attach expanded")
        self._check_commit(self._commit(name))

    @precondition(lambda self: len(self.latest) >= 2)
    @rule(name=st.sampled_from(NAMES), data=st.data())
    def merge(self, name: str, data: st.DataObject) -> None:
        """Merge other sessions' commits; the base peer's block stays locked and byte-identical."""
        others = sorted((c for s, c in self.latest.items() if s != name), key=lambda c: c.id)
        if not others:
            return
        peers = data.draw(
            st.lists(st.sampled_from(others), min_size=1, max_size=2, unique_by=lambda c: c.id)
        )
        already = self.latest[name].attached if name in self.latest else frozenset()
        result = self.sessions[name].merge(peers, "Combine what the peers found.")
        if isinstance(result, Failure):
            return
        self.sessions[name] = result.unwrap()
        commit = self._commit(name)
        assert commit is not None
        assert commit.parent_ids[-len(peers) :] == tuple(p.id for p in peers)
        base = peers[0].id
        # A peer attached before the merge keeps its earlier, unlocked block (expanded once).
        if base in commit.attached and base not in already:
            block = [
                i for i in commit.items if i.attached_from == base and i.reason != "attach_failed"
            ]
            assert block, "the base peer's block is expanded"
            event("merge with a locked base block")
            assert all(i.locked for i in block)
            # Invariant 4: however long the rules run, the locked block stays byte-identical.
            for pipeline in (DEFAULT, SMALL):
                late = Facts(now=self.now + 1e7, head_turn=commit.next_turn() + 50, tokenizer=RULER)
                after = pipeline.run(commit, late)
                assert [i for i in after.items if i.attached_from == base] == block
        self._check_commit(commit)

    def _check_commit(self, commit: ContextCommit | None) -> None:
        if commit is None:
            return
        problems = (
            attached_once(commit)
            + attached_traceable(commit, self.commits)
            + one_ruler(commit, RULER)
            + protocol_valid(render_commit(commit))
            + one_summary(commit)
        )
        assert [p.message for p in problems] == []

    @invariant()
    def every_commit_keeps_invariants_6_and_7(self) -> None:
        """Invariants 6 and 7 over every commit built so far."""
        for name, commit in self.latest.items():
            assert attached_once(commit) == []
            assert multi_parent_from_merge(
                commit, self.sessions[name].graph, self.commits
            ) == [] or not any(c.id == commit.head_node_id for c in self.sessions[name].branch())
            markers = [i.reason for i in commit.items if i.reason in (OPEN, CLOSE)]
            assert markers.count(OPEN) == markers.count(CLOSE)


TestAttachMachine = AttachMachine.TestCase
TestAttachMachine.settings = settings(stateful_step_count=30, deadline=None)
