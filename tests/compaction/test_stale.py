"""The stale guard: a summary planned against one commit never lands on a newer one (reference 003 ⑪)."""

from __future__ import annotations

import asyncio

import attrs
from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pmap

from ctxrules.check.compaction import honest_outcome, nothing_lost
from ctxrules.commit import ContextCommit
from ctxrules.compaction import (
    CompactionPlan,
    CutParams,
    Outcome,
    compact,
    compact_async,
    plan_compaction,
)
from ctxrules.dag import Session
from ctxrules.generation import CommitMap, ensure_latest_commit
from ctxrules.rules import Facts, Pipeline
from ctxrules.testing import texts
from ctxrules.testing.compaction import FakeSummarizer, agent_sessions, five_sections
from ctxrules.tokens import HeuristicCounter

FACTS = Facts(now=1.0, context_window=100_000, tokenizer=HeuristicCounter())
PARAMS = CutParams(keep_min_tokens=0, keep_recent_tokens=50, keep_min_messages=1, protect_last_n=1)


@attrs.define
class Live:
    """The session as the rest of the program sees it while a summary is being written."""

    session: Session
    sources: dict[str, ContextCommit]
    commits: CommitMap = attrs.field(factory=pmap)

    def latest(self) -> ContextCommit:
        commit, self.commits = ensure_latest_commit(
            self.commits,
            self.session.graph,
            self.session.head,
            Pipeline(),
            FACTS,
            sources=self.sources,
        ).unwrap()
        return commit

    def turn(self, step: tuple[str, object]) -> None:
        kind, value = step
        if kind == "send":
            self.session = self.session.send("user", value).unwrap()
        else:
            ids = list(self.session.graph.order)
            self.session = self.session.checkout(ids[int(value) % len(ids)]).unwrap()


STEPS = st.lists(
    st.tuples(st.just("send"), texts(6)) | st.tuples(st.just("checkout"), st.integers(0, 999)),
    max_size=3,
)


@given(agent_sessions(max_turns=4), STEPS, STEPS)
def test_interleaved_turns_make_the_result_stale(drawn, during, after):
    """A turn or checkout that lands while the summarizer runs discards its result as stale."""
    live = Live(*drawn)
    base = live.latest()
    if not isinstance(plan_compaction(base, FACTS.context_window, PARAMS), CompactionPlan):
        return

    async def main():
        turns_done = asyncio.Event()

        async def summarizer(messages):
            await turns_done.wait()  # the turns land while the summary is being written
            return five_sections(messages)

        compaction = asyncio.create_task(
            compact_async(base, summarizer, FACTS, params=PARAMS, latest=live.latest)
        )
        for step in during:
            await asyncio.sleep(0)
            live.turn(step)
        turns_done.set()
        return await compaction

    result = asyncio.run(main())
    current = live.latest()
    assert honest_outcome(result, 1) == []
    if current.id != base.id:
        assert (result.outcome, result.reason) == (Outcome.FAILED, "stale")
        assert result.commit == current
        assert result.summary_id is None
        return
    assert result.outcome is not Outcome.NO_OP
    assert result.reason != "stale"
    if result.outcome is Outcome.FINISHED:
        # Turns after the compaction build on the compacted commit and lose nothing.
        live.commits = live.commits.set(live.session.head, result.commit)
        for step in after:
            live.turn(step)
            assert nothing_lost(live.latest(), live.session.graph) == []


def test_sync_stale_guard():
    """With a blocking summarizer too, a turn sent during the call makes the result stale."""
    live = Live(Session("s"), {})
    for n in range(8):
        live.turn(("send", f"message {n} " + "word " * 30))
    base = live.latest()

    def summarizer(messages):
        live.turn(("send", "one more thing"))
        return five_sections(messages)

    result = compact(base, summarizer, FACTS, params=PARAMS, latest=live.latest)
    assert (result.outcome, result.reason) == (Outcome.FAILED, "stale")
    assert [e.kind for e in result.events] == [Outcome.STARTED, Outcome.FAILED]
    assert result.error.startswith(f"planned against {base.id}")
    unchanged = compact(base, FakeSummarizer("ok"), FACTS, params=PARAMS, latest=lambda: base)
    assert unchanged.outcome is Outcome.FINISHED


def test_a_crashing_latest_fails_without_raising():
    """An error while landing the summary is a failed outcome, never an exception (reference 003 ⑫)."""
    live = Live(Session("s"), {})
    for n in range(8):
        live.turn(("send", f"message {n} " + "word " * 30))
    base = live.latest()

    def broken() -> ContextCommit:
        raise OSError("store unavailable")

    result = compact(base, FakeSummarizer("ok"), FACTS, params=PARAMS, latest=broken)
    assert (result.outcome, result.reason, result.error) == (
        Outcome.FAILED,
        "error",
        "OSError: store unavailable",
    )
    assert result.commit == base
