"""A long agent session replayed at 32k and 200k windows: requests fit, and the reports use the one ruler.

The real sessions of ``../shared/data/sessions/`` go through the same function: build a
`Session` with an importer and call ``replay_compaction(session, window, summarizer, ruler)``.
"""

from __future__ import annotations

import pytest

from ctxrules.compaction import CutParams
from ctxrules.testing.compaction import FakeSummarizer, replay_compaction
from ctxrules.tokens import HeuristicCounter, Tokenizer, load_encoding

RULERS: dict[str, Tokenizer] = {
    "heuristic": HeuristicCounter(),
    "cl100k_base": load_encoding("cl100k_base").unwrap(),
}


@pytest.mark.parametrize("ruler", RULERS, ids=RULERS.keys())
@pytest.mark.parametrize("window", [32_000, 200_000])
def test_requests_fit_and_reports_match_the_ruler(long_session, window, ruler):
    """Invariants 5, 10, 12, 13, 14 at every compaction; tokens_after equals occupancy; no request over budget."""
    session = long_session()
    report = replay_compaction(
        session, window, FakeSummarizer("ok"), RULERS[ruler], fixed_tokens=1_200
    )
    assert report.problems == []
    assert report.over_budget == 0
    assert report.largest_request <= report.input_budget
    assert report.outcomes["finished"] >= 2
    assert report.requests == len(session.branch())


@pytest.mark.parametrize("behaviour", ["raise", "garbage", "empty", "hang"])
def test_a_failing_summarizer_never_wedges_the_session(long_session, behaviour):
    """Whatever the summarizer does, every compaction lands a (structural) summary and requests still fit."""
    fake = FakeSummarizer(behaviour, hang_seconds=2.0)
    try:
        report = replay_compaction(long_session(), 32_000, fake, RULERS["heuristic"], timeout=0.05)
    finally:
        fake.release()
    assert report.problems == []
    assert report.over_budget == 0
    assert report.outcomes["finished"] > 0
    assert report.fell_back == report.outcomes["finished"]


def test_manual_keep_recent_tokens(long_session):
    """The keep_recent_tokens override drives the same replay with a fixed tail."""
    report = replay_compaction(
        long_session(),
        200_000,
        FakeSummarizer("ok"),
        RULERS["heuristic"],
        params=CutParams(keep_recent_tokens=30_000),
    )
    assert report.problems == []
    assert report.over_budget == 0
