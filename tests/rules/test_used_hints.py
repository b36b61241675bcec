"""``used_hint_chars``: the stub of a result the assistant used after it arrived names more of it."""

from __future__ import annotations

import attrs

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules import Facts, age_tool_results
from ctxrules.rules.hints import last_written
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
#: A file of forty functions: far more names than 120 characters of hints hold.
SOURCE = "".join(f"def handler_{n:02d}(ctx): return helper_{n:02d}(ctx)\n" for n in range(40))


def _result(node: str, turn: int) -> ContextItem:
    return ContextItem(
        node,
        "tool",
        rendered=SOURCE,
        tool_name="cat",
        tool_call_id=f"c{node}",
        turn=turn,
        tokens=RULER.count(SOURCE),
    )


def _said(node: str, text: str, turn: int) -> ContextItem:
    return ContextItem(node, "assistant", rendered=text, turn=turn, tokens=RULER.count(text))


def _stubs(items: list[ContextItem], used_hint_chars: int) -> list[str]:
    rule = age_tool_results(3, 200, 40, 0, (), stub_hint_chars=120, used_hint_chars=used_hint_chars)
    commit = ContextCommit("s").with_items(items)
    out = rule(commit, Facts(head_turn=9, tokenizer=RULER))
    return [i.rendered for i in out.items if i.is_tool and i.state is State.AGED]


def test_a_result_the_assistant_used_after_it_arrived_keeps_more_names() -> None:
    """Two of its names in a later reply: up to 1,200 characters of names; the other stays short."""
    items = [
        _result("t0", 0),
        _said("a1", "Now handler_07 calls helper_07; I will change both.", 1),
        _result("t2", 2),
        _said("a9", "done", 9),
    ]
    used, unused = _stubs(items, used_hint_chars=1200)
    assert len(used) > 600
    assert len(unused) < 300
    assert "handler_31" in used
    assert "handler_31" not in unused
    # Without the parameter both stubs are the short one.
    assert [len(s) < 300 for s in _stubs(items, used_hint_chars=0)] == [True, True]


def test_use_before_the_result_or_of_one_name_does_not_count() -> None:
    """A reply before the result arrived, or naming one of its names, leaves the short stub."""
    before = [_said("a0", "handler_07 and helper_07", 0), _result("t1", 1), _said("a9", "ok", 9)]
    one = [_result("t0", 0), _said("a1", "only handler_07", 1), _said("a9", "ok", 9)]
    for items in (before, one):
        assert [len(s) < 300 for s in _stubs(items, used_hint_chars=1200)] == [True]


def test_last_written_maps_each_name_to_its_last_position() -> None:
    """The assistant's text and its calls' arguments, newest position wins."""
    edit = ContextItem(
        "t5",
        "tool",
        rendered="ok",
        tool_name="edit",
        tool_call_id="c5",
        turn=5,
        arguments='{"new_string": "helper_01(ctx)"}',
    )
    commit = ContextCommit("s").with_items(
        [_said("a0", "helper_01 and handler_02", 0), _result("t1", 1), edit]
    )
    last = last_written(commit, 0, Facts(tokenizer=RULER))
    assert last["helper_01"] == 2
    assert last["handler_02"] == 0
    assert "handler_31" not in last


def _stub(items: list[ContextItem], *, unseen: bool) -> str:
    rule = age_tool_results(3, 200, 40, 0, (), stub_hint_chars=60, stub_hints_unseen=unseen)
    commit = ContextCommit("s").with_items(items)
    out = rule(commit, Facts(head_turn=9, tokenizer=RULER))
    return next(i.rendered for i in out.items if i.is_tool)


def test_a_stubs_names_skip_those_the_request_already_shows() -> None:
    """Names the assistant's messages or the call's arguments show give their room to others."""
    result = attrs.evolve(_result("t0", 0), arguments='{"path": "a.py", "focus": "helper_02"}')
    items = [result, _said("a1", "handler_01 and helper_01 look fine", 1), _said("a9", "ok", 9)]
    plain, unseen = _stub(items, unseen=False), _stub(items, unseen=True)
    names_plain, names_unseen = plain.split("names:")[1], unseen.split("names:")[1]
    assert "handler_01" in names_plain
    assert "helper_02" in names_plain
    assert "handler_01" not in names_unseen
    assert "helper_02" not in names_unseen
    assert "handler_03" in names_unseen
    assert "handler_03" not in names_plain
