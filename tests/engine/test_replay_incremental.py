"""Replay's running measurements equal the same measurements recomputed from scratch.

Replay adds to its naive resend, its protocol check, its summary count and its shared
prefix only what each request brings; these tests recompute each of them over the whole
request and compare.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from ctxrules.check import protocol_valid
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.dag import Role
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.replay import ProtocolCheck, replay, shared_prefix
from ctxrules.engine.turn import TurnPrep
from ctxrules.generation import NO_COMMITS, ensure_latest_commit
from ctxrules.importers import import_session
from ctxrules.render import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    count_messages,
    counted,
    render_commit,
)
from ctxrules.rules import Facts, Pipeline
from ctxrules.spec import load_spec
from ctxrules.tokens import CountingTokenizer, load_encoding

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "ctxrules" / "data" / "sessions" / "entire-cli-5d_755497c182_0.jsonl"
DEFAULT = load_spec(ROOT / "specs" / "default.toml").unwrap()
RULER = load_encoding().unwrap()


def _recorded(engine: DefaultContextEngine) -> list[TurnPrep]:
    """The turns ``engine.prepare`` will give, recorded as it gives them."""
    preps: list[TurnPrep] = []
    prepare = engine.prepare

    def recording(*args: object, **kwargs: object) -> object:
        result = prepare(*args, **kwargs)  # type: ignore[arg-type]
        preps.append(result.unwrap())
        return result

    engine.prepare = recording  # type: ignore[method-assign]
    return preps


def _replayed(path: Path, window: int) -> None:
    session = import_session(path, skip_bad=True).unwrap().session
    engine = DefaultContextEngine(
        pipeline=DEFAULT, tokenizer=RULER, summarizer=lambda _: "Summary of the work so far."
    )
    preps = _recorded(engine)
    requests = replay(session, engine, window=window)
    assert len(requests) == len(preps) > 0
    naive = NO_COMMITS
    previous: tuple[Message, ...] = ()
    for request, prep in zip(requests, preps, strict=True):
        tokens = prep.commit.total_tokens
        shared, shared_tokens = shared_prefix(previous, prep.messages, tokens, RULER)
        assert shared_tokens == tokens - count_messages(prep.messages[shared:], RULER)
        previous = prep.messages
        commit, naive = ensure_latest_commit(
            naive, session.graph, prep.head, Pipeline(), Facts(tokenizer=RULER)
        ).unwrap()
        fixed = prep.budget.system + prep.budget.tools_schema
        assert request.naive == commit.total_tokens + fixed, request.index
        assert request.protocol_violations == len(protocol_valid(prep.messages)), request.index
        summary = sum(i.tokens for i in prep.commit.items if i.state is State.SUMMARY)
        assert request.summary_tokens == summary, request.index


@pytest.mark.parametrize("window", [8_000, 32_000])
def test_bundled_session_running_measurements_equal_full_recounts(window: int) -> None:
    """Naive resend, protocol violations and summary tokens, request by request."""
    _replayed(BUNDLED, window)


def test_shared_sessions_running_measurements_equal_full_recounts(shared_sessions: Path) -> None:
    """The same on the shortest real sessions of each source (the longer ones are slow)."""
    paths = sorted(shared_sessions.rglob("*.json*"), key=lambda p: p.stat().st_size)[:3]
    for path in paths:
        _replayed(path, 16_000)


def _call(call_id: str) -> tuple[Message, Message]:
    return (
        Message("assistant", (ToolUseBlock(call_id, "ls", "{}"),)),
        Message("tool", (ToolResultBlock(call_id, "a.py"),)),
    )


def test_protocol_check_counts_what_a_full_check_counts_on_a_growing_request() -> None:
    """A repeated id across prefix and tail, an orphan in the tail, and a broken prefix."""
    user = Message("user", (TextBlock("go"),))
    orphan = Message("tool", (ToolResultBlock("zz", "late"),))
    requests = [
        (user, *_call("c1")),
        (user, *_call("c1"), *_call("c2")),
        (user, *_call("c1"), *_call("c2"), *_call("c1")),  # c1 again
        (user, *_call("c1"), *_call("c2"), *_call("c1"), orphan),
        (user, *_call("c3")),  # the prefix broke
        (user, *_call("c3"), user),
    ]
    check, previous = ProtocolCheck(), ()
    for messages in requests:
        shared = 0
        for old, new in zip(previous, messages, strict=False):
            if old != new:
                break
            shared += 1
        found, check = check.check(messages, shared)
        assert found == len(protocol_valid(messages)), messages
        previous = messages


def test_a_prefix_that_ends_inside_an_item_counts_only_the_items_unshared_messages() -> None:
    """The call of a tool item is shared, its result changed and a reply came after it."""
    user = counted(ContextItem("u1", Role.USER, rendered="list the files"), RULER)
    call = counted(
        ContextItem(
            "t1", Role.TOOL, rendered="a.py\nb.py\n" * 40, tool_name="ls", tool_call_id="c1"
        ),
        RULER,
    )
    aged = counted(attrs.evolve(call, state=State.AGED, rendered="[2 lines]"), RULER)
    before = render_commit(ContextCommit("s", items=(user, call)))
    reply = counted(ContextItem("a1", Role.ASSISTANT, rendered="Two files: a.py and b.py."), RULER)
    after = render_commit(ContextCommit("s", items=(user, aged, reply)))
    total = user.tokens + aged.tokens + reply.tokens
    counting = CountingTokenizer(RULER)
    shared, shared_tokens = shared_prefix(before, after, total, counting)
    assert shared == 2  # the user message and the call
    assert shared_tokens == total - count_messages(after[2:], RULER)
    # The reply's count is read from its item: only the changed result is tokenized.
    assert counting.chars == len("[2 lines]")


def test_the_naive_resend_builds_items_only_for_what_the_engine_tightened(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Work counted: the naive resend builds (renders, counts) an item only where the engine's differs.

    Every other new node's count is the engine's, read from its commit; building its item
    again rendered its payloads a second time (arguments as canonical JSON) for nothing.
    """
    import ctxrules.engine.replay as replay_module  # noqa: PLC0415 - the module whose names are patched
    import ctxrules.generation.generate as generate_module  # noqa: PLC0415

    session = import_session(BUNDLED, skip_bad=True).unwrap().session
    built: list[str] = []
    real = generate_module.item_for

    def counting(call: object, turn: int) -> ContextItem:
        item = real(call, turn)  # type: ignore[arg-type]
        built.append(item.source_node_id)
        return item

    engine = DefaultContextEngine(pipeline=DEFAULT, tokenizer=RULER)
    preps = _recorded(engine)
    original = replay_module.naive_growth

    def measured(*args: object, **kwargs: object) -> tuple[int, int]:
        # Only the naive resend's builds are counted, not the engine's own.
        with monkeypatch.context() as patch:
            patch.setattr(generate_module, "item_for", counting)
            patch.setattr(replay_module, "item_for", counting, raising=False)
            return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(replay_module, "naive_growth", measured)
    # At 8,000 tokens the default spec's cap shrinks: a few results are capped on arrival.
    requests = replay(session, engine, window=8_000)
    tightened = {
        item.source_node_id
        for prep in preps
        for item in prep.commit.items
        if item.reason != "new" and item.state is not State.SUMMARY
    }
    assert len(requests) == 18
    assert 0 < len(built) < len(session.graph.nodes) // 4
    assert set(built) <= tightened
    assert len(built) == len(set(built))
