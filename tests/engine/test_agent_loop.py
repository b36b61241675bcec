"""The docs' agent-loop example: 200 turns of a real session through the engine at a 32k window."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from ctxrules.importers import import_session
from ctxrules.tokens import load_encoding
from tests.module_files import load_file

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "agent_loop.py"


def _example() -> ModuleType:
    return load_file("agent_loop", EXAMPLE)


def test_200_turns_never_exceed_the_window_and_occupancy_is_what_was_sent(
    shared_sessions: Path,
) -> None:
    """Every request fits the 32k window and its input budget; occupancy equals the tokens sent."""
    recorded = (
        import_session(shared_sessions / "openai-chat" / "django__django-11797.traj.json")
        .unwrap()
        .session
    )
    turns = _example().run(recorded, turns=200, window=32_000, tokenizer=load_encoding().unwrap())
    assert len(turns) == 200
    for turn in turns:
        assert turn.request_tokens <= turn.input_budget <= turn.window, turn
        assert turn.occupancy_total == turn.request_tokens, turn
        assert turn.messages_valid, turn
    assert any("compact:finished" in t.decision_path for t in turns), (
        "the loop exercised compaction"
    )


def test_a_path_that_is_no_session_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The example is copied into users' code: a bad path is not an `UnwrapFailedError`."""
    assert _example().main(["/no/such/session.json"]) == 2
    assert capsys.readouterr().err == (
        "/no/such/session.json: cannot read the file: No such file or directory\n"
    )
