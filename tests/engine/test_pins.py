"""Pins (invariant 17): a pinned message is whole in every request, whatever rules, compaction and snip do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import ctxrules
from ctxrules.check import pins_kept, pins_sent
from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.commit.item import stored_item
from ctxrules.commit.pins import apply_pins
from ctxrules.compaction.snip import snip
from ctxrules.render import render_commit
from ctxrules.render.render import pinned_messages
from ctxrules.spec import load_spec
from ctxrules.tokens import HeuristicCounter

RULE = "Standing rule: never push to main."


def _reply(i: int) -> dict[str, Any]:
    call = {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "choices": [{"message": message}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 5},
    }


def _loop(ctx: ctxrules.Context, sizes: list[int], pin_at: int) -> tuple[int, int]:
    """Drive an agent loop; returns (compactions, requests without the rule after it was pinned)."""
    compactions = missing = 0
    ctx.add({"role": "user", "content": "Fix the parser."})
    ctx.openai()
    previous: ContextCommit | None = None
    for i, size in enumerate(sizes):
        ctx.record(_reply(i))
        ctx.add_tool_result(f"c{i}", f"line {i}\n" * size)
        if i == pin_at:
            ctx.add({"role": "user", "content": RULE})
            ctx.pin()
        request = ctx.openai()
        prep = ctx.last
        assert prep is not None
        compactions += any(s.startswith("compact:finished") for s in prep.decision_path)
        if i > pin_at:
            missing += not any(m.get("content") == RULE for m in request["messages"])  # type: ignore[union-attr]
            assert pins_sent(prep.commit, prep.messages) == []
            if previous is not None:
                assert pins_kept(previous, prep.commit) == []
        previous = prep.commit
    return compactions, missing


#: No rules: the history is sent whole, so at 16k it is compacted on almost every turn (the
#: default spec's sizes shrink at 16k and it compacts rarely).
NO_RULES = "version = 1\nrules = []\n"


def test_a_pinned_rule_is_in_every_request_across_ten_compactions() -> None:
    """The must-show: a rule pinned mid-session is sent verbatim through ten compactions and more."""
    pinned, missing = _loop(
        ctxrules.Context(NO_RULES, model="gpt-4o", window=16_000), [900] * 40, 2
    )
    assert pinned >= 10
    assert missing == 0
    # The same loop unpinned loses the rule: the test measures the pin, not the window.
    ctx = ctxrules.Context(NO_RULES, model="gpt-4o", window=16_000)
    ctx.pin = lambda _node_id=None: ""  # type: ignore[method-assign,assignment]
    _, lost = _loop(ctx, [900] * 40, 2)
    assert lost > 10


@settings(max_examples=15)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=2_000), min_size=3, max_size=25),
    window=st.sampled_from([8_000, 16_000, 32_000]),
    data=st.data(),
)
def test_invariant_17_pins_survive_rules_compaction_and_snip(
    sizes: list[int], window: int, data: st.DataObject
) -> None:
    """Invariant 17 at any window, sizes and pin point: every request holds the pin whole."""
    pin_at = data.draw(st.integers(min_value=0, max_value=len(sizes) - 2))
    _, missing = _loop(ctxrules.Context(model="gpt-4o", window=window), sizes, pin_at)
    assert missing == 0


def test_a_spec_pins_matching_messages_on_arrival_and_the_cap_leaves_them_whole(
    tmp_path: Path,
) -> None:
    """A spec's [[pins]] pins on arrival, and a pinned message is never capped."""
    spec = tmp_path / "pins.toml"
    spec.write_text(
        Path("specs/default.toml").read_text()
        + '\n[[pins]]\nwhen = { role = "user", text = { matches = "(?i)never push" } }\n'
    )
    ctx = ctxrules.Context(model="gpt-4o", window=32_000, spec=spec)
    long_rule = RULE + " " + "Detail. " * 1_000
    ctx.add({"role": "user", "content": long_rule})
    ctx.openai()
    ctx.add({"role": "user", "content": "Another message."})
    ctx.openai()
    assert len(ctx.pinned) == 1
    assert ctx.last is not None
    assert ctx.last.commit.items[0].rendered == long_rule


def test_a_pins_table_is_checked_with_locations() -> None:
    """A bad [[pins]] table is a Failure naming where."""
    failure = load_spec('version = 1\n[[pins]]\nwhen = { rol = "user" }\n').failure()
    assert "pins[0].when.rol" in str(failure)
    failure = load_spec("version = 1\npins = 3\n").failure()
    assert "pins: expected an array of pin tables" in str(failure)


def test_an_aged_item_cannot_be_pinned_and_unpin_ends_a_pin() -> None:
    """Pinning never loosens an item (invariant 3); unpinning unlocks it."""
    aged = ContextItem("a", "tool", state="aged", rendered="[stub]")
    whole = ContextItem("b", "user", rendered=RULE)
    commit = ContextCommit("s").append_items([aged, whole])
    done = apply_pins(commit, {"a": True, "b": True})
    assert [i.pinned for i in done.commit.items] == [False, True]
    assert [node for node, _ in done.refused] == ["a"]
    assert "already aged" in done.refused[0][1]
    undone = apply_pins(done.commit, {"b": False}).commit
    assert not undone.items[1].pinned
    assert not undone.items[1].locked


def test_snip_never_drops_or_shortens_a_pinned_message() -> None:
    """Snip keeps the pinned message whole; unpinned, the same message goes."""
    items = [ContextItem(f"n{i}", "user", rendered=f"message {i} " * 200) for i in range(6)]
    items[1] = items[1].pin()
    messages = render_commit(ContextCommit("s").append_items(items))
    keep = pinned_messages(messages)
    assert keep == frozenset({1})
    out = snip(messages, 300, HeuristicCounter(), keep=keep)
    assert messages[1] in out.messages
    unpinned = snip(messages, 300, HeuristicCounter())
    assert messages[1] not in unpinned.messages


def test_a_pin_changes_no_stored_digest_of_unpinned_items() -> None:
    """Items stored before pins existed keep their digests; a pinned one round-trips."""
    item = ContextItem("a", "user", rendered="x")
    assert "pinned" not in item.to_json()
    pinned = item.pin()
    assert stored_item(pinned.to_json(), pinned.digest) == pinned
    assert pinned.digest != item.digest


def test_pins_survive_a_restart(tmp_path: Path) -> None:
    """A pin is stored with the commit and holds in a new process."""
    store = tmp_path / "s.sqlite"
    with ctxrules.Context(model="gpt-4o", store=store, session="s1") as ctx:
        ctx.add({"role": "user", "content": RULE})
        node = ctx.pin()
        ctx.openai()
    with ctxrules.Context(model="gpt-4o", store=store, session="s1") as again:
        # Before any request of its own, the reopened context reports the stored pins.
        assert again.pinned == (node,)
        again.add({"role": "user", "content": "go on"})
        again.openai()
        assert again.pinned == (node,)


def test_pin_with_no_argument_pins_the_tool_result_added_last() -> None:
    """Invariant 17: `pin()` after `add_tool_result` pins that result, not the assistant message it answers."""
    ctx = ctxrules.Context(model="gpt-4o", tokenizer=HeuristicCounter())
    ctx.add({"role": "user", "content": "Read the plan."})
    ctx.openai()
    reply = ctx.record(_reply(0))
    assistant = ctx.session.head
    ctx.add_tool_result(reply.tool_calls[0].id, "the plan: never push to main")
    pinned = ctx.pin()
    assert pinned != assistant
    assert ctx.session.graph.nodes[pinned].output == "the plan: never push to main"
    ctx.openai()
    assert ctx.pinned == (pinned,)
    # After a message, that message: the one added last.
    ctx.add({"role": "user", "content": RULE})
    assert ctx.pin() == ctx.session.head
