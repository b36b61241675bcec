"""`ctxrules replay URL --session S` on both backends: a session `Context` stored, replayed by name."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from ctxrules.cli.main import main
from ctxrules.cli.stored_log import replay_id
from tests.live_loop import Loop, final_commits, run_live

#: A loop whose aging lands (large outputs at 16k) with a system prompt, tools and receipts.
LOOP = Loop(16_000, (12_000, 400) * 8, system="Be brief.", tools=True, recall=True, pin_at=1)


def test_a_stored_session_replays_to_its_own_requests_on_either_backend(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every request the agent built is the one its replay builds; without ``--session`` the sessions are named."""
    run_live(LOOP, store_url, model="claude-sonnet-4-5", session="first")
    sent = run_live(LOOP, store_url, model="claude-sonnet-4-5", session="second")
    args = ["replay", store_url, "--session", "second", "--store", store_url, "--json"]
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(args) == 0
    found = json.loads(capsys.readouterr().out)
    # The window and the provider are the live loop's (a Claude model: Anthropic's cache).
    assert (found["window"], found["provider"]) == (16_000, "anthropic")
    assert [request["sent"] for request in found["requests"]] == sent
    assert final_commits(store_url, replay_id("second")) == final_commits(store_url, "second")
    assert main(["replay", store_url]) == 2
    assert "--session ('first', 'second', 'second.replay')" in capsys.readouterr().err
