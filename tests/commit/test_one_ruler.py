"""Invariant 10 (one ruler): total_tokens equals the tokens of exactly what render_commit sends."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pmap

from ctxrules.commit import ContextCommit
from ctxrules.commit.commit import items_digest
from ctxrules.dag import Session
from ctxrules.generation import ensure_latest_commit
from ctxrules.render import count_messages, counted, render_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.testing import commits, context_items, sessions
from ctxrules.tokens import HeuristicCounter, Tokenizer, load_encoding

TIKTOKEN = load_encoding("cl100k_base").unwrap()
RULERS: list[Tokenizer] = [HeuristicCounter(), TIKTOKEN]


@pytest.mark.parametrize("ruler", RULERS, ids=lambda r: r.name)
@given(data=st.data())
def test_invariant_10_random_commits(ruler: Tokenizer, data: st.DataObject) -> None:
    """Invariant 10: for random commits in every state, total_tokens == count(render_commit)."""
    commit = data.draw(commits(tokenizer=ruler))
    assert commit.total_tokens == count_messages(render_commit(commit), ruler)


@pytest.mark.parametrize("ruler", RULERS, ids=lambda r: r.name)
@given(session=sessions(), data=st.data())
def test_invariant_10_generated_commits(
    ruler: Tokenizer, session: Session, data: st.DataObject
) -> None:
    """Invariant 10: commits generated from random sessions, turn by turn, count what they render."""
    if session.head is None:
        return
    facts = Facts(tokenizer=ruler)
    branch_ids = [c.id for c in session.branch()]
    stops = sorted(
        set(data.draw(st.lists(st.sampled_from(branch_ids), max_size=4))) | {session.head},
        key=branch_ids.index,
    )
    known = pmap()
    for head in stops:
        commit, known = ensure_latest_commit(known, session.graph, head, Pipeline(), facts).unwrap()
        assert commit.total_tokens == count_messages(render_commit(commit), ruler)


@given(commits(), st.lists(context_items()), st.data())
def test_invariant_10_kept_incrementally(
    commit: ContextCommit, new: list, data: st.DataObject
) -> None:
    """Invariant 10 holds after appends and replacements, and the kept digest equals a fresh one."""
    ruler = HeuristicCounter()
    grown = commit.append_items(new)
    if grown.items:
        index = data.draw(st.integers(0, len(grown.items) - 1))
        replacement = counted(data.draw(context_items()), ruler)
        grown = grown.replace_items({index: replacement})
    assert grown.total_tokens == count_messages(render_commit(grown), ruler)
    assert grown.digest == items_digest(grown.items)
    rebuilt = ContextCommit(
        grown.session_id,
        grown.parent_ids,
        grown.created_at,
        grown.head_node_id,
        attached=grown.attached,
    )
    assert grown == rebuilt.with_items(grown.items)
