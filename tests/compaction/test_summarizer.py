"""The summarizer: prompts, and the structural fallback for every way a call can fail."""

from __future__ import annotations

import asyncio
import threading

import pytest

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.compaction import (
    SECTIONS,
    SYSTEM_PROMPT,
    CompactionPlan,
    CutParams,
    plan_compaction,
    structural_summary,
    summarize,
    summarize_async,
)
from ctxrules.render import TextBlock, counted
from ctxrules.testing.compaction import BEHAVIOURS, FakeSummarizer
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
PARAMS = CutParams(keep_min_tokens=0, keep_recent_tokens=10, protect_last_n=1, keep_min_messages=1)


def _plan(previous: str | None = None) -> CompactionPlan:
    roles = ["user", "assistant"] * 4
    items = [
        counted(ContextItem(f"n{i}", role, rendered=f"message {i} " + "word " * 30), RULER)
        for i, role in enumerate(roles)
    ]
    if previous is not None:
        items.insert(
            3,
            counted(ContextItem("sm_old", "assistant", state="summary", rendered=previous), RULER),
        )
    plan = plan_compaction(ContextCommit("s").with_items(items), 200_000, PARAMS)
    assert isinstance(plan, CompactionPlan)
    return plan


def _prompt_text(plan: CompactionPlan) -> str:
    return "".join(b.text for m in plan.prompt for b in m.blocks if isinstance(b, TextBlock))


def test_fresh_prompt_has_five_sections_and_style_rules():
    """The first summary asks for the five sections, after the style rules."""
    plan = _plan()
    assert plan.prompt[0].blocks == (TextBlock(SYSTEM_PROMPT),)
    text = _prompt_text(plan)
    assert all(f"{n}. {name}:" in text for n, (name, _) in enumerate(SECTIONS, 1))
    assert "<conversation>" in text
    assert "<previous-summary>" not in text
    assert "Do not hedge" in SYSTEM_PROMPT
    assert "Here is a summary" in SYSTEM_PROMPT


def test_update_prompt_wraps_the_previous_summary():
    """A chained summary wraps the previous one in <previous-summary> and says the new messages win."""
    text = _prompt_text(_plan(previous="We set up the repo."))
    assert "<previous-summary>\nWe set up the repo.\n</previous-summary>" in text
    assert "the new messages win" in text


def test_structural_summary_is_role_and_sixty_characters():
    """The fallback lists each folded message as [role] plus its first 60 characters."""
    plan = _plan()
    lines = structural_summary(plan).splitlines()
    assert len(lines) == len(plan.folded)
    assert lines[0].startswith("[assistant] message 3 word")
    assert all(len(line.split("] ", 1)[1]) <= 61 for line in lines)


FAILURES = {
    "raise": "RuntimeError: provider returned 401",
    "empty": "UnusableSummary: the summarizer returned blank text",
    "non_text": "UnusableSummary: the summarizer returned dict, not text",
    "cancel": "SummaryCancelled: the cancel event was set after the summarizer call",
    "cancelled": "SummaryCancelled: the cancel event was set before the summarizer call",
}


@pytest.mark.parametrize(("behaviour", "error"), FAILURES.items(), ids=FAILURES.keys())
def test_sync_failures_fall_back(behaviour, error):
    """A raising, blank, non-text or cancelled summarizer yields the structural summary and its error."""
    plan = _plan()
    fake = FakeSummarizer(behaviour)
    result = summarize(plan, fake, cancel=fake.cancel)
    assert result.fell_back_to_structural
    assert result.error == error
    assert result.text == structural_summary(plan)
    assert len(fake.calls) == (0 if behaviour == "cancelled" else 1)


@pytest.mark.parametrize(("behaviour", "error"), FAILURES.items(), ids=FAILURES.keys())
def test_async_failures_fall_back(behaviour, error):
    """The async variant falls back exactly as the sync one does."""
    plan = _plan()
    fake = FakeSummarizer(behaviour)
    result = asyncio.run(summarize_async(plan, fake.summarize_async, cancel=fake.cancel))
    assert (result.fell_back_to_structural, result.error) == (True, error)


def test_async_timeout_falls_back_quickly():
    """A summarizer that hangs past its timeout is abandoned and the fallback used."""
    fake = FakeSummarizer("hang", hang_seconds=5.0)
    result = asyncio.run(summarize_async(_plan(), fake.summarize_async, timeout=0.05))
    assert result.fell_back_to_structural
    assert result.error is not None
    assert result.error.startswith("TimeoutError")


def test_sync_timeout_leaves_no_thread_behind():
    """A blocking summarizer past its timeout falls back; once released its thread ends."""
    fake = FakeSummarizer("hang", hang_seconds=5.0)
    result = summarize(_plan(), fake, timeout=0.05)
    assert result.error == "TimeoutError: the summarizer took longer than timeout=0.05s"
    fake.release()
    for thread in threading.enumerate():
        if thread.name == "ctxrules-summarizer":
            thread.join(1.0)
            assert not thread.is_alive()


def test_success_keeps_the_text():
    """A good answer is used as it is (stripped), with no fallback recorded."""
    result = summarize(_plan(), lambda _: "  1. User intent: ship it.  ")
    assert (result.text, result.fell_back_to_structural, result.error) == (
        "1. User intent: ship it.",
        False,
        None,
    )


def test_cancelling_the_awaiting_task_still_cancels():
    """Cancelling the caller's task is not swallowed by the fallback."""

    async def main() -> None:
        fake = FakeSummarizer("hang", hang_seconds=5.0)
        task = asyncio.create_task(summarize_async(_plan(), fake.summarize_async))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_every_behaviour_is_known():
    """The fake covers success and each failure the issue names."""
    assert set(FAILURES) | {"ok", "hang", "garbage"} == set(BEHAVIOURS)
