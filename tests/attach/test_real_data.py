"""Attach a branch of one real session into another and render the result for both providers."""

from __future__ import annotations

from pathlib import Path

from pyrsistent import pmap

from ctxrules.check import (
    attached_once,
    attached_traceable,
    nothing_lost,
    one_ruler,
    protocol_valid,
)
from ctxrules.generation import ensure_latest_commit
from ctxrules.importers import import_session
from ctxrules.render import render_commit, to_anthropic, to_openai
from ctxrules.rules import Facts, Pipeline
from ctxrules.spec import load_spec
from ctxrules.tokens import load_encoding

DEFAULT = load_spec(Path(__file__).resolve().parents[2] / "specs" / "default.toml").unwrap()
FACTS = Facts(now=1e9, tokenizer=load_encoding().unwrap())


def test_attach_a_real_branch_into_another_session(shared_sessions: Path) -> None:
    """A Chinese Claude Code branch attached into a LangGraph thread: one block, valid requests, traceable items."""
    source_session = (
        import_session(shared_sessions / "claude-code-zh" / "2d_58ad9e0d5c_1.jsonl")
        .unwrap()
        .session
    )
    target_session = (
        import_session(shared_sessions / "langchain" / "5aa47db1-d0cb-4eb9-aea5-3dac1b371c5a.json")
        .unwrap()
        .session
    )
    # A branch, not the whole session: the source commit is taken at a node halfway along it.
    middle = source_session.branch()[len(source_session.branch()) // 2].id
    source, _ = ensure_latest_commit(
        pmap(), source_session.graph, middle, DEFAULT, FACTS, session_id=source_session.session_id
    ).unwrap()
    attached = target_session.attach(source).unwrap()
    commits = {source.id: source}
    commit, _ = ensure_latest_commit(
        pmap(),
        attached.graph,
        attached.head,
        DEFAULT,
        FACTS,
        session_id=attached.session_id,
        sources=commits,
    ).unwrap()

    block = [i for i in commit.items if i.attached_from == source.id]
    assert len(block) == 2 + sum(1 for i in source.items if i.visible)
    assert attached_once(commit) == []
    assert attached_traceable(commit, commits) == []
    assert nothing_lost(commit, attached.graph) == []
    assert one_ruler(commit, FACTS.tokenizer) == []
    messages = render_commit(commit)
    assert protocol_valid(messages) == []
    openai = to_openai(messages)
    anthropic = to_anthropic(messages, cache_system=True, cache_prefix_end=len(messages) - 1)
    sent = "\n".join(str(m.get("content")) for m in openai)
    assert f"commit {source.id}" in sent
    assert source.items[0].rendered[:20] in sent
    assert anthropic.messages[0]["role"] == "user"
    assert Pipeline().run(commit, FACTS) == commit
