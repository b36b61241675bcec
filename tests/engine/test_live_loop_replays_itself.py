"""The replay of a stored live session builds the live loop's very commit at every request.

`Context` with a store keeps the history and, with the session, what its requests carried
beside it (system prompt, tool schemas, receipts: `ctxrules.engine.frame`); its stored
commits show when each pin was asked. ``ctxrules replay STORE --session S`` sends the same,
so every figure it reports (cost, breaks, fidelity) is the live loop's own: the live loop
keeps every promise the replay makes, sync or async, reopened or not, with compactions
whose summaries the host's summarizer writes in the turn. Invariants 2 and 15: the commits are the same content
(the same item digests), so the prefix the live loop kept between batch points is the one
the replay measured.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxrules import Context
from ctxrules.cli.main import main
from ctxrules.cli.stored_log import read_stored, replay_id
from ctxrules.engine.frame import RequestFrame
from ctxrules.store import open_store
from tests.live_loop import SUMMARIZER, Loop, final_commits, run_live

loops = st.builds(
    Loop,
    window=st.sampled_from([8_000, 16_000, 32_000]),
    outputs=st.lists(st.sampled_from([20, 400, 3_000, 12_000]), min_size=4, max_size=30).map(tuple),
    # A coding agent's system prompt runs to thousands of tokens: this one about 1,200.
    system=st.sampled_from(["", "You are a careful coding agent. Never push to main. " * 100]),
    tools=st.booleans(),
    recall=st.booleans(),
    pin_at=st.none() | st.integers(min_value=0, max_value=3),
    reopen=st.sampled_from([0, 3, 7]),
    usage=st.booleans(),
    said=st.sampled_from([0, 2_000]),
    summarizer=st.booleans(),
    use_async=st.booleans(),
    spec=st.sampled_from(["default", "small-window"]),
    thinking=st.booleans(),
)


@pytest.mark.filterwarnings("ignore::ctxrules.ContextWarning")  # a cut request is a request too
@settings(max_examples=25)
@given(loop=loops)
# Aging lands at 16k with large outputs: the receipts are in the system text from then on.
@example(loop=Loop(16_000, (12_000, 400) * 12, recall=True, system="Be brief.", reopen=5))
# Another spec than the default: the replay runs the loop's own without being told.
@example(loop=Loop(16_000, (3_000, 12_000) * 8, said=2_000, spec="small-window"))
# Compactions at 8k, the summaries a host's summarizer's, asked from an async loop.
@example(loop=Loop(8_000, (3_000,) * 20, said=2_000, summarizer=True, use_async=True, reopen=7))
# Replies with thinking blocks: the items keep them, and the replay reads them from the nodes.
@example(loop=Loop(8_000, (3_000, 12_000) * 8, tools=True, reopen=3, thinking=True))
def test_invariant_2_and_15_a_stored_live_session_replays_to_its_own_commits(loop: Loop) -> None:
    """Every request the live loop built is the commit its replay builds at that point."""
    with tempfile.TemporaryDirectory() as folder:
        store = str(Path(folder) / "agent.sqlite")
        requests = run_live(loop, store)
        # No --spec: the live loop's own, kept with its session.
        args = ["replay", store, "--session", "main", "--store", store]
        if loop.summarizer:
            args += ["--summarizer", SUMMARIZER]
        with (
            contextlib.redirect_stdout(io.StringIO()) as out,
            contextlib.redirect_stderr(io.StringIO()),
        ):
            status = main([*args, "--json"])
        assert status == 0
        live = final_commits(store, "main")
        replayed = final_commits(store, replay_id("main"))
        assert len(live) == len(requests)
        differ = [head for head, items in live.items() if replayed.get(head) != items]
        assert differ == [], (
            f"{len(differ)} of {len(requests)} requests differ, first at {differ[0]}"
        )
        # The whole request too: system text (its receipt included), tools and messages.
        assert [r["sent"] for r in json.loads(out.getvalue())["requests"]] == requests


def test_the_frame_and_the_pins_are_read_back_from_the_store(tmp_path: Path) -> None:
    """What `Context` kept with the session is what the replay sends; a pin is dated by its request."""
    loop = Loop(16_000, (400, 3_000, 20), system="Be brief.", tools=True, recall=True, pin_at=1)
    store = str(tmp_path / "agent.sqlite")
    run_live(loop, store)
    run = read_stored(store, "main")
    assert not isinstance(run, str)
    frame = run.frame
    assert isinstance(frame, RequestFrame)
    assert (frame.model, frame.window, frame.system, frame.receipts) == (
        "gpt-4o",
        16_000,
        "Be brief.",
        True,
    )
    # The spec as text: the replay runs it unless told otherwise.
    assert frame.spec.endswith("[recall]\ntools = true\n")
    names = [tool.get("function", {}).get("name", tool.get("name")) for tool in frame.tools]  # type: ignore[union-attr]
    assert names[0] == "read"
    assert "recall" in names
    # Pinned at turn 1, before its first request: the pin is asked at that user message.
    [(head, asked)] = run.pins.items()
    assert asked == ((head, True),)
    assert run.log.session.graph.nodes[head].output == "step 1: read src/mod_1.py"


def test_a_session_stored_before_the_frame_replays_as_a_log(tmp_path: Path) -> None:
    """A session created without the frame (an older store, another writer) replays with none."""
    store = str(tmp_path / "old.sqlite")
    opened = open_store(store).unwrap()
    opened.create_session("main", metadata={"format": "claude-code"}).unwrap()
    opened.close()
    ctx = Context(model="gpt-4o", window=16_000, store=store, session="main")
    ctx.add({"role": "user", "content": "hello"})
    ctx.openai()
    ctx.record({"choices": [{"message": {"role": "assistant", "content": "Hello."}}]})
    ctx.close()
    run = read_stored(store, "main")
    assert not isinstance(run, str)
    assert run.frame is None
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(["replay", store, "--session", "main", "--store", ":memory:", "--json"]) == 0
    found = json.loads(out.getvalue())
    # No frame: the default window and provider, as for a recorded log.
    assert (found["window"], found["provider"]) == (200_000, "anthropic")


def test_the_frame_is_built_only_for_a_new_session(tmp_path: Path) -> None:
    """A reopened session keeps the frame it was created with: no prompt or spec is read for it."""
    from ctxrules.render.system_prompt import AgentProfile  # noqa: PLC0415 - only here

    store = str(tmp_path / "agent.sqlite")
    calls: list[str] = []

    def memory() -> str:
        calls.append("memory")
        return f"note {len(calls)}"

    def opened() -> Context:
        return Context(model="gpt-4o", agent=AgentProfile("Ada", "a1"), memory=memory, store=store)

    opened().close()
    # The room check reads the prompt once; a new session's frame reads it once more.
    assert len(calls) == 2
    opened().close()
    assert len(calls) == 3
    kept = open_store(store).unwrap()
    [info] = kept.list_sessions().unwrap()
    kept.close()
    frame = RequestFrame.from_metadata(info.metadata)
    assert frame is not None
    assert frame.system.endswith("note 2\n── End of agent prompt ──")
