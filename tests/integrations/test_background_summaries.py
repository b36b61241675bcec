"""The integrations write summaries in the background when given a summarizer, and cancel on close."""

from __future__ import annotations

import asyncio
import threading

import pytest

from ctxrules.engine.background import Threads
from ctxrules.render import Message
from ctxrules.tokens import HeuristicCounter

SUMMARY = "## Goal\nanswer every question"


def test_the_agents_session_summarizes_in_the_background_and_cancels_on_close() -> None:
    """CtxSession: get_items() never waits below 95 %; close() cancels the summary under way."""
    pytest.importorskip("agents", reason="the agents extra is not installed")
    from ctxrules.integrations.openai_agents import CtxSession  # noqa: PLC0415 - an extra

    release = threading.Event()

    def slow(_: tuple[Message, ...]) -> str:
        release.wait(30)
        return SUMMARY

    async def run() -> tuple[list[tuple[str, ...]], int, int]:
        session = CtxSession("bg", window=8_000, summarizer=slow, tokenizer=HeuristicCounter())
        assert isinstance(session.engine.background, Threads)
        paths: list[tuple[str, ...]] = []
        for turn in range(40):
            if any("summary:started" in path for path in paths):
                break
            words = " ".join(f"w{turn}_{i}" for i in range(40))
            await session.add_items(
                [
                    {"role": "user", "content": f"question {turn}: {words}"},
                    {"role": "assistant", "content": f"answer {turn}: {words}"},
                ]
            )
            await session.get_items()
            assert session.last_prep is not None
            paths.append(session.last_prep.decision_path)
        running = len(session.engine.jobs)
        session.close()
        return paths, running, len(session.engine.jobs)

    try:
        paths, running, after = asyncio.run(run())
    finally:
        release.set()
    assert any("summary:started" in path for path in paths)
    assert not any("summary:waited" in path for path in paths)
    assert (running, after) == (1, 0)


def test_the_structural_summary_needs_no_background() -> None:
    """Without a summarizer the Agents SDK session compacts in the call; background=False too."""
    pytest.importorskip("agents", reason="the agents extra is not installed")
    from ctxrules.integrations.openai_agents import CtxSession  # noqa: PLC0415 - an extra

    assert CtxSession("a", window=8_000).engine.background is None
    assert CtxSession("b", window=8_000, summarizer=str, background=False).engine.background is None


def test_the_langchain_middleware_summarizes_in_the_background_by_default() -> None:
    """The agent's own model writes summaries in a thread; background=False keeps them in the call."""
    pytest.importorskip("langchain", reason="the langchain extra is not installed")
    from ctxrules.integrations.langchain import CtxrulesMiddleware  # noqa: PLC0415 - an extra

    assert isinstance(CtxrulesMiddleware(window=8_000).engine.background, Threads)
    assert CtxrulesMiddleware(window=8_000, background=False).engine.background is None
