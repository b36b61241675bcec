"""Invariant 16 for items attached from another session's commit: found by the property test."""

from __future__ import annotations

from pyrsistent import pmap

from ctxrules.check import recoverable
from ctxrules.commit import ContextCommit, State
from ctxrules.compaction import CutParams, compact
from ctxrules.dag import Session
from ctxrules.generation import ensure_latest_commit
from ctxrules.recall import answer_recall, recall_index
from ctxrules.render import Message
from ctxrules.rules import Facts, NamedRule, Pipeline, builtins
from ctxrules.rules.handles import handles_in, item_handle
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
SMALL_CUT = CutParams(
    keep_min_tokens=0,
    keep_recent_tokens=40,
    keep_min_messages=1,
    protect_first_n=1,
    protect_last_n=2,
)


def _source(session_id: str, texts: list[str], pipeline: Pipeline = Pipeline()) -> ContextCommit:  # noqa: B008 - frozen value
    session = Session(session_id)
    for n, text in enumerate(texts):
        session = session.send("user" if n % 2 == 0 else "assistant", text).unwrap()
    commit, _ = ensure_latest_commit(
        pmap(), session.graph, session.head or "", pipeline, Facts(tokenizer=RULER)
    ).unwrap()
    return commit


def _structural(_: tuple[Message, ...]) -> str:
    raise RuntimeError("use the structural summary")


def _attached_then_folded() -> tuple[Session, dict[str, ContextCommit], ContextCommit]:
    """The shrunk example: a session attaches another session's commit, and a compaction folds the block."""
    source = _source("s_other", ["the other session's question", "its answer"])
    session = Session("s").send("user", "the the the the").unwrap()
    session = session.send("assistant", "the the").unwrap().attach(source).unwrap()
    for turn in range(3):
        session = (
            session.send("user", "the " * 30).unwrap().send("assistant", f"ok {turn}").unwrap()
        )
    sources = {source.id: source}
    commit, _ = ensure_latest_commit(
        pmap(),
        session.graph,
        session.head or "",
        Pipeline(),
        Facts(tokenizer=RULER),
        sources=sources,
    ).unwrap()
    result = compact(commit, _structural, Facts(tokenizer=RULER), params=SMALL_CUT)
    assert result.applied
    return session, sources, result.commit


def test_a_folded_attached_block_resolves_to_what_was_attached() -> None:
    """Invariant 16: attached items folded by a summary name handles that give back the attached text."""
    session, sources, commit = _attached_then_folded()
    folded = [
        i for i in commit.items if i.attached_from is not None and i.state is State.SUMMARIZED
    ]
    assert [i.rendered for i in folded if i.source_node_id not in session.graph][1:3] == [
        "the other session's question",
        "its answer",
    ]
    assert recoverable(commit, session.graph, sources=sources) == []
    index = recall_index(session.graph, commit, sources=sources)
    summary = next(i for i in commit.items if i.state is State.SUMMARY)
    for item in folded[1:3]:
        assert item_handle(item) in handles_in(summary.rendered)
        answer = answer_recall(index, {"handle": item_handle(item)}, tokenizer=RULER)
        assert (answer.is_error, answer.body) == (False, item.rendered)


def test_without_its_source_an_attached_copy_is_reported() -> None:
    """Without the attached commits the copies' originals are unknown, and the check says so."""
    session, _, commit = _attached_then_folded()
    found = {v.expected for v in recoverable(commit, session.graph)}
    assert "a handle that resolves to the original" in found


def test_one_node_attached_from_two_commits_has_two_handles() -> None:
    """A node attached through two commits, tightened in one, is named per attachment (no ambiguity)."""
    texts = ["ask", "a long answer " * 40]
    clear = builtins()["clear_idle"]
    full = _source("s_other", texts)
    other = _source(
        "s_other", [*texts, "more"], Pipeline((NamedRule("x", clear.build({}).unwrap()),))
    )
    session = Session("s").send("user", "go").unwrap().attach(full).unwrap()
    session = session.send("user", "again").unwrap().attach(other).unwrap()
    sources = {full.id: full, other.id: other}
    commit, _ = ensure_latest_commit(
        pmap(),
        session.graph,
        session.head or "",
        Pipeline(),
        Facts(tokenizer=RULER),
        sources=sources,
    ).unwrap()
    answer_id = full.items[1].source_node_id
    copies = [i for i in commit.items if i.source_node_id == answer_id]
    assert len({item_handle(i) for i in copies}) == 2
    assert recall_index(session.graph, commit, sources=sources).collisions == pmap()
