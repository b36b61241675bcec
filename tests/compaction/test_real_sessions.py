"""Compaction on the real sessions at 32k and 200k windows: every request fits, one ruler throughout."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrules.importers import import_session
from ctxrules.spec import load_spec
from ctxrules.testing import FakeSummarizer, replay_compaction
from ctxrules.tokens import load_encoding

SPEC = load_spec(Path(__file__).resolve().parents[2] / "specs" / "default.toml").unwrap()
RULER = load_encoding().unwrap()


def _sessions(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/*") if p.suffix in (".json", ".jsonl"))


@pytest.mark.parametrize("window", [32_000, 200_000])
def test_real_sessions_never_exceed_the_window(shared_sessions: Path, window: int) -> None:
    """Invariants 3, 4, 5, 10, 12, 13, 14 at each compaction; no request over budget; tokens_after is the ruler's."""
    for path in _sessions(shared_sessions):
        session = import_session(path, skip_bad=True).unwrap().session
        report = replay_compaction(session, window, FakeSummarizer("ok"), RULER, pipeline=SPEC)
        assert report.problems == [], (path.name, report.problems[:3])
        assert report.over_budget == 0, path.name
        assert report.largest_request <= report.input_budget <= window, path.name
