"""The occupancy ruler: one record from the rendered view, and a generation that compaction bumps."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pmap

from ctxrules.compaction import CutParams, Outcome, compact
from ctxrules.compaction.occupancy import Basis, Measurement, next_generation, occupancy
from ctxrules.dag import Session
from ctxrules.generation import ensure_latest_commit
from ctxrules.render import count_messages, render_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.testing import commits
from ctxrules.testing.compaction import FakeSummarizer
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
FACTS = Facts(context_window=50_000, tokenizer=RULER)


@given(commits(tokenizer=RULER), st.integers(0, 5_000), st.integers(1, 10**6))
def test_estimate_is_the_rendered_view(commit, fixed, window):
    """Invariant 10 for the ruler: the estimate is the count of what render_commit sends, plus fixed tokens."""
    record = occupancy(commit, window, generation=0, fixed_tokens=fixed)
    assert record.estimated == count_messages(render_commit(commit), RULER) + fixed
    assert (record.total_used, record.basis, record.calibration) == (
        record.estimated,
        Basis.ESTIMATED,
        None,
    )


def _session(turns: int) -> Session:
    session = Session("s")
    for n in range(turns):
        session = session.send(
            "user" if n % 2 == 0 else "assistant", f"turn {n} " + "word " * 80
        ).unwrap()
    return session


def test_measured_only_for_the_same_head_and_generation():
    """A provider measurement counts until the head moves or the generation changes."""
    session = _session(6)
    commit, _ = ensure_latest_commit(
        pmap(), session.graph, session.head, Pipeline(), FACTS
    ).unwrap()
    seen = Measurement(session.head, 3, commit.total_tokens + 60)
    record = occupancy(commit, 50_000, generation=3, measurement=seen)
    assert (record.basis, record.total_used) == (Basis.MEASURED, commit.total_tokens + 60)
    assert record.calibration == (commit.total_tokens + 60) / commit.total_tokens
    assert occupancy(commit, 50_000, generation=4, measurement=seen).basis is Basis.ESTIMATED
    moved = Measurement("n_elsewhere", 3, 999)
    assert occupancy(commit, 50_000, generation=3, measurement=moved).basis is Basis.ESTIMATED


def test_compaction_bumps_the_generation_at_the_same_head():
    """After a compaction the head is unchanged, the old measurement is dropped, and tokens_after is the ruler's total."""
    session = _session(30)
    commit, _ = ensure_latest_commit(
        pmap(), session.graph, session.head, Pipeline(), FACTS
    ).unwrap()
    generation = 7
    seen = Measurement(session.head, generation, commit.total_tokens)
    result = compact(
        commit,
        FakeSummarizer("ok"),
        FACTS,
        params=CutParams(keep_recent_tokens=500),
        fixed_tokens=40,
    )
    assert result.outcome is Outcome.FINISHED
    assert result.commit.head_node_id == commit.head_node_id
    generation = next_generation(generation, result)
    assert generation == 8
    record = occupancy(
        result.commit, 50_000, generation=generation, measurement=seen, fixed_tokens=40
    )
    assert record.basis is Basis.ESTIMATED
    assert record.total_used == result.tokens_after
    assert record.total_used == count_messages(render_commit(result.commit), RULER) + 40
    again = compact(
        result.commit, FakeSummarizer("ok"), FACTS, params=CutParams(keep_recent_tokens=500)
    )
    assert again.outcome is Outcome.NO_OP
    assert next_generation(generation, again) == generation
