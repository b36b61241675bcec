"""The SDK requests `Context` sends: built from the kept per-item forms, equal to a fresh conversion."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from immutables import Map

from ctxrules.commit import ContextCommit
from ctxrules.engine import sdk
from ctxrules.render import Message, TextBlock, render_commit
from ctxrules.render import openai as openai_adapter
from ctxrules.render.anthropic import to_anthropic
from ctxrules.render.openai import to_openai
from ctxrules.testing import commits

SYSTEMS = st.sampled_from(["", "Be brief.", "   "])


def _plain_openai(system: str, messages: tuple[Message, ...]) -> list[dict[str, object]]:
    # The reference: the system prompt and a plain tuple, converted message by message.
    head = [Message("system", (TextBlock(system),))] if system else []
    return to_openai([*head, *messages])


def _plain_anthropic(system: str, messages: tuple[Message, ...]) -> Any:
    head = [Message("system", (TextBlock(system),))] if system else []
    neutral = [*head, *messages]
    return to_anthropic(
        neutral, cache_system=bool(system), cache_prefix_end=len(neutral) - 1 if neutral else None
    )


@given(commits(), SYSTEMS)
def test_invariant_11_openai_request_equals_the_plain_conversion(
    commit: ContextCommit, system: str
) -> None:
    """Invariant 11: the request from kept forms is the message-by-message one, pairs included."""
    rendered = render_commit(commit)
    request = sdk.openai_request("m", system, rendered, ())
    assert request["messages"] == _plain_openai(system, tuple(rendered))


@given(commits(), SYSTEMS)
def test_invariant_11_anthropic_request_equals_the_plain_conversion(
    commit: ContextCommit, system: str
) -> None:
    """Invariant 11: the Anthropic request from kept forms, breakpoints included, is the plain one."""
    rendered = render_commit(commit)
    request = sdk.anthropic_request("m", system, rendered, (), 100)
    plain = _plain_anthropic(system, tuple(rendered))
    assert request["messages"] == plain.messages
    assert request.get("system", []) == plain.system


@given(commits(), st.lists(st.integers(1, 5), max_size=12), SYSTEMS)
def test_invariant_11_a_commit_grown_turn_by_turn_sends_the_plain_conversion(
    commit: ContextCommit, steps: list[int], system: str
) -> None:
    """Invariant 11: requests of a commit grown a few items at a time (the tail's join kept and extended) are the plain ones."""
    items = list(commit.items)
    grown, at = ContextCommit("s"), 0
    for step in [*steps, len(items)]:
        grown = grown.append_items(items[at : at + step])
        at += step
        rendered = render_commit(grown)
        request = sdk.openai_request("m", system, rendered, ())
        assert request["messages"] == _plain_openai(system, tuple(rendered))


def test_a_turn_joins_only_the_new_items_of_its_last_chunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request after three more items joins those three, not the whole last chunk again."""
    commit = ContextCommit("s").append_items(_tool_items(0, 100))
    sdk.openai_request("m", "", render_commit(commit), ())
    joined: list[int] = []
    original = openai_adapter._joined

    def counting(run: tuple[object, ...], after: object = None) -> object:
        joined.append(len(run))
        return original(run, after)  # type: ignore[arg-type]

    monkeypatch.setattr(openai_adapter, "_joined", counting)
    for first in (100, 103, 106):
        commit = commit.append_items(_tool_items(first, first + 3))
        request = sdk.openai_request("m", "", render_commit(commit), ())
        assert len(request["messages"]) == 2 * (first + 3)  # type: ignore[arg-type]
    assert joined == [3, 3, 3]


def test_a_turn_converts_only_its_new_items(
    recorded_calls: Callable[[object, str], list[Any]],
) -> None:
    """The second request of a commit grown by one item converts that item alone."""
    from ctxrules.commit import ContextItem  # noqa: PLC0415 - only this test builds items

    items = [ContextItem(f"u{n}", "user", rendered=f"message {n}") for n in range(300)]
    commit = ContextCommit("s").append_items(items)
    sdk.openai_request("m", "Be brief.", render_commit(commit), ())
    converted: list[object] = recorded_calls(openai_adapter, "_parts")
    grown = commit.append_items([ContextItem("u300", "user", rendered="one more")])
    request = sdk.openai_request("m", "Be brief.", render_commit(grown), ())
    assert len(request["messages"]) == 302  # type: ignore[arg-type]
    assert [item.source_node_id for item in converted] == ["u300"]  # type: ignore[attr-defined]


def _tool_items(first: int, last: int, call_id: str = "") -> list[Any]:
    from ctxrules.commit import ContextItem  # noqa: PLC0415 - only these tests build items

    return [
        ContextItem(
            f"t{n}",
            "tool",
            rendered=f"result {n}",
            tool_name="read",
            tool_call_id=call_id or f"c{n}",
            arguments="{}",
        )
        for n in range(first, last)
    ]


def test_invariant_11_a_turn_checks_the_pairing_of_the_changed_tail_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Invariant 11: of 300 tool items sent again with one more, only the last run is checked."""
    commit = ContextCommit("s").append_items(_tool_items(0, 300))
    sdk.openai_request("m", "", render_commit(commit), ())
    checked: list[str] = []
    original = openai_adapter._checked_in

    def counting(
        memo: dict[str, object], key: str, before: Map[str, None], kept: tuple[object, ...]
    ) -> object:
        known = memo.get(key)
        if not (isinstance(known, tuple) and known[0] is before and known[1] is kept):
            checked.extend(sorted(kept[2]))  # type: ignore[call-overload]
        return original(memo, key, before, kept)  # type: ignore[arg-type]

    monkeypatch.setattr(openai_adapter, "_checked_in", counting)
    grown = commit.append_items(_tool_items(300, 301))
    request = sdk.openai_request("m", "", render_commit(grown), ())
    # Only the last chunk of 64 (items 256 to 300) is checked again.
    assert sorted(checked) == sorted(f"c{n}" for n in range(256, 301))
    assert len(request["messages"]) == 2 * 301  # type: ignore[arg-type]


def test_invariant_11_a_call_id_reused_in_the_tail_is_still_found() -> None:
    """Invariant 11: a new item reusing an id sent 300 items earlier degrades, as plain conversion does."""
    commit = ContextCommit("s").append_items(_tool_items(0, 300))
    sdk.openai_request("m", "", render_commit(commit), ())
    grown = commit.append_items(_tool_items(300, 301, call_id="c5"))
    rendered = render_commit(grown)
    request = sdk.openai_request("m", "", rendered, ())
    assert request["messages"] == _plain_openai("", tuple(rendered))
    assert request["messages"][-1] == {"role": "user", "content": "[tool result c5] result 300"}  # type: ignore[index]


def test_a_sent_message_cannot_be_changed_but_a_copy_can() -> None:
    """The kept messages are shared with later requests: changing one raises; a deep copy is free."""
    import copy  # noqa: PLC0415 - only this test copies

    commit = ContextCommit("s").append_items(_tool_items(0, 3))
    request = sdk.openai_request("m", "", render_commit(commit), ())
    message = request["messages"][1]  # type: ignore[index]
    with pytest.raises(TypeError, match="change a copy"):
        message["content"] = "changed"
    copied = copy.deepcopy(request)
    copied["messages"][1]["content"] = "changed"
    again = sdk.openai_request("m", "", render_commit(commit), ())
    assert again["messages"][1]["content"] == "result 0"  # type: ignore[index]


def test_a_turn_sends_the_kept_messages_again_where_a_chunk_splits_an_assistant_turn() -> None:
    """Every message an OpenAI request shares with the last is the very object sent then.

    An assistant's text and its call are two items; where a 64-item chunk ends between
    them, the two kept messages are merged into one. That merge was made anew on every
    turn, one more fresh message every 32 turns of history (11 at 300 turns), so a
    framework converting each fresh message did work that grew with the session.
    """
    import ctxrules  # noqa: PLC0415 - the public loop

    ctx = ctxrules.Context("default", model="gpt-4o", window=128_000, clock=lambda: 0.0)
    ctx.add({"role": "user", "content": "Read the files."})
    before: list[Any] = []
    fresh_counts = []
    for n in range(300):
        messages = list(ctx.openai()["messages"])  # type: ignore[call-overload]
        if before and messages[: len(before)] == before:  # not a batch point's rewrite
            sent = {id(m) for m in before}
            fresh_counts.append(sum(id(m) not in sent for m in messages))
        before = messages
        call = {"id": f"c{n}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        message = {"role": "assistant", "content": f"Reading {n}.", "tool_calls": [call]}
        ctx.record({"choices": [{"message": message}]})
        ctx.add_tool_result(f"c{n}", "x = 1\n" * 50)
    assert len(before) > 500
    assert len(fresh_counts) > 250, "most turns extend the one before"
    # The turn's own messages (its reply merged with its call, and the result): a
    # constant, whatever the history.
    assert max(fresh_counts) <= 3, fresh_counts
