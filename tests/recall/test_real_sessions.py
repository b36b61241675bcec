"""Invariant 16 on real sessions replayed through the default spec: every hidden item comes back."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrules.compaction import Summarizer
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.recall import memory_search
from ctxrules.engine.replay import replay
from ctxrules.importers import import_session
from ctxrules.recall.audit import audit_commits
from ctxrules.spec import load_spec
from ctxrules.tokens import default_tokenizer

# The small-window spec: these short sessions stay under the default spec's 8k-token floor
# for batched tightening, so under it nothing would be hidden to recover.
SPEC = Path(__file__).resolve().parents[2] / "specs" / "small-window.toml"
#: The three smallest sessions, one per source format family; bench/recall_audit.py runs all.
SMALL = (
    "5d_755497c182_0.jsonl",
    "2d_58ad9e0d5c_1.jsonl",
    "5aa47db1-d0cb-4eb9-aea5-3dac1b371c5a.json",
)


def _structural(_: object) -> str:
    raise RuntimeError("replay with the structural summary")


@pytest.mark.slow
@pytest.mark.parametrize("window", [32_000, 200_000])
@pytest.mark.parametrize("name", SMALL)
def test_every_hidden_item_is_recoverable_and_every_shown_handle_resolves(
    shared_sessions: Path, name: str, window: int
) -> None:
    """Invariant 16: a model that recalls every handle it was shown gets each original back, with no error."""
    path = next(shared_sessions.rglob(name))
    session = import_session(path, skip_bad=True).unwrap().session
    summarizer: Summarizer = _structural
    engine = DefaultContextEngine(
        pipeline=load_spec(SPEC).unwrap(), summarizer=summarizer, tokenizer=default_tokenizer()
    )
    replay(session, engine, window=window)
    commits = engine.states[session.session_id].by_id.values()
    with memory_search(session) as search:
        audit = audit_commits(session.graph, commits, tokenizer=engine.tokenizer, search=search)
    assert audit.hidden > 0
    assert (audit.recovered, audit.unresolved, audit.errors) == (audit.hidden, 0, 0)
    assert audit.searches > 0
    assert audit.search_errors == 0
    assert [v.message for v in audit.violations] == []
