"""A reopened `Context` attributes the last usage as the uninterrupted process does.

The usage was stored without the request it measured, and a reopened process took it for
a measurement of its last stored commit: after a request that got no response, the
uninterrupted run's next occupancy was estimated, the reopened one's measured (500 times
larger). A count past 2**53 (``10**400``) was accepted and made every later request of
the reopened session raise `OverflowError`.
"""

from __future__ import annotations

from pathlib import Path

from returns.result import Failure

from ctxrules.engine.context import Context
from ctxrules.store import open_store
from ctxrules.testing.responses import openai_response
from ctxrules.tokens import HeuristicCounter
from ctxrules.tokens.usage import ProviderUsage, UsageState


def _context(path: Path) -> Context:
    return Context(
        model="gpt-4o",
        window=16_000,
        store=str(path),
        session="s",
        tokenizer=HeuristicCounter(),
        clock=lambda: 1_000.0,
    )


def test_a_reopened_context_attributes_the_usage_to_the_request_it_measured(
    tmp_path: Path,
) -> None:
    """Request, response with usage, a second request unanswered: both processes estimate next."""
    path = tmp_path / "s.db"
    first = _context(path)
    first.add({"role": "user", "content": "Read the file."})
    first.openai()
    first.record(openai_response(1, "Reading it.", [], (5_000, 0)))
    first.add({"role": "user", "content": "Now the next one."})
    first.openai()  # sent; the process dies before the response
    reopened = _context(path)
    again = first.prepare().occupancy
    resumed = reopened.prepare().occupancy
    assert (resumed.basis, resumed.total_used) == (again.basis, again.total_used)
    assert again.basis.value == "estimated"
    assert reopened.openai() == first.openai()
    first.close()
    reopened.close()


def test_a_count_past_two_to_the_53_is_not_usage() -> None:
    """``prompt_tokens = 10**400`` makes the usage unreadable instead of a measurement."""
    huge = {"usage": {"prompt_tokens": 10**400, "completion_tokens": 1}}
    assert isinstance(ProviderUsage.from_openai(huge), Failure)
    anthropic = {"usage": {"input_tokens": 2**60, "output_tokens": 1}}
    assert isinstance(ProviderUsage.from_anthropic(anthropic), Failure)
    ctx = Context(model="gpt-4o", window=16_000, tokenizer=HeuristicCounter())
    ctx.add({"role": "user", "content": "hi"})
    ctx.openai()
    assert ctx.record(openai_response(1, "ok", [], (10, 0)) | huge).usage is None
    assert ctx.openai()["messages"]


def test_a_stored_session_with_a_huge_count_reopens(tmp_path: Path) -> None:
    """A usage row holding 10**400 (written before the bound) is dropped, not raised on."""
    path = tmp_path / "s.db"
    ctx = _context(path)
    ctx.add({"role": "user", "content": "hi"})
    ctx.openai()
    ctx.record(openai_response(1, "ok", [], (10, 0)))
    ctx.close()
    with open_store(str(path)).unwrap() as store:
        store.put_usage("s", UsageState(last_prompt_tokens=10**400, turn_count=1)).unwrap()
    reopened = _context(path)
    assert reopened.openai()["messages"]  # at the measured head: raised OverflowError
    reopened.add({"role": "user", "content": "again"})
    assert reopened.openai()["messages"]
    reopened.close()
