"""``used_tail_turns``: a result the assistant itself keeps using stays whole past the tail window."""

from __future__ import annotations

import pytest

import ctxrules.rules.hints as hints_module
import ctxrules.rules.tool_aging as aging
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules import Facts, age_tool_results
from ctxrules.rules.hints import written_names
from ctxrules.tokens import HeuristicCounter

RULER = HeuristicCounter()
SOURCE = "def load_config(path):\n    return parse_settings(path, strict_mode=True)\n" * 20


def _commit(reply: str, *, role: str = "assistant", reply_turn: int = 6) -> ContextCommit:
    result = ContextItem(
        "t0",
        "tool",
        rendered=SOURCE,
        tool_name="cat",
        tool_call_id="c0",
        turn=0,
        tokens=RULER.count(SOURCE),
    )
    other = ContextItem(
        "t1",
        "tool",
        rendered="plain output\n" * 40,
        tool_name="cat",
        tool_call_id="c1",
        turn=1,
        tokens=200,
    )
    said = ContextItem(f"{role}1", role, rendered=reply, turn=reply_turn, tokens=RULER.count(reply))
    return ContextCommit("s").with_items([result, other, said])


def _aged(commit: ContextCommit, used: int, head_turn: int = 8) -> list[State]:
    rule = age_tool_results(3, 200, 40, 0, (), used_tail_turns=used)
    return [i.state for i in rule(commit, Facts(head_turn=head_turn, tokenizer=RULER)).items]


def test_a_result_whose_names_the_assistant_wrote_lately_stays_whole() -> None:
    """Two of its names in a reply four turns ago keep it; the unused result beside it ages."""
    commit = _commit(
        "I will call load_config and then parse_settings on the new file.", reply_turn=4
    )
    assert _aged(commit, used=4) == [State.FULL, State.AGED, State.FULL]
    assert _aged(commit, used=0) == [State.AGED, State.AGED, State.FULL]


def test_use_older_than_the_window_or_by_others_does_not_count() -> None:
    """A reply before the last used_tail_turns turns, one name only, or a user's mention: the result ages."""
    assert _aged(_commit("load_config and parse_settings", reply_turn=3), used=4)[0] is State.AGED
    assert _aged(_commit("only load_config here"), used=4)[0] is State.AGED
    assert _aged(_commit("load_config and parse_settings", role="user"), used=4)[0] is State.AGED


def test_a_calls_arguments_are_the_assistants_writing_too() -> None:
    """An edit whose arguments use the result's names keeps it whole."""
    edit = ContextItem(
        "t9",
        "tool",
        rendered="ok",
        tool_name="edit",
        tool_call_id="c9",
        turn=6,
        tokens=1,
        arguments='{"new_string": "cfg = load_config(p); parse_settings(cfg)"}',
    )
    commit = _commit("Editing now.").append_items([edit])
    assert written_names(commit, 5) >= {"load_config", "parse_settings"}
    assert _aged(commit, used=4)[0] is State.FULL


def test_a_held_results_names_are_read_once_across_batch_points(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A result held whole is visited again at every batch point; its text is read for names once.

    The mark stays before a held result, so each run of the rule meets it again.
    """
    read: list[str] = []
    names = hints_module.names

    def counted(text: str) -> list[str]:
        read.append(text)
        return names(text)

    monkeypatch.setattr(hints_module, "names", counted)
    commit = _commit(
        "I will call load_config and then parse_settings on the new file.", reply_turn=4
    )
    rule = age_tool_results(3, 200, 40, 0, (), used_tail_turns=4)
    for head_turn in (8, 8, 8):
        commit = rule(commit, Facts(head_turn=head_turn, tokenizer=RULER))
        assert commit.items[0].state is State.FULL
    assert read.count(SOURCE) == 1


def test_a_batch_point_with_nothing_new_reads_no_text_for_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Work counted: the names in view and where each was last written come from the items' memos.

    A held result keeps the mark at the start, so each batch point walks every item after
    it; the assistant's texts and its calls' arguments were read for names at every one.
    """
    read: list[str] = []
    names = hints_module.names

    def counted(text: str) -> list[str]:
        read.append(text)
        return names(text)

    monkeypatch.setattr(hints_module, "names", counted)
    held = ContextItem(
        "t0", "tool", rendered=SOURCE, tool_name="cat", tool_call_id="c0", turn=0, tokens=400
    )
    later = [held]
    for turn in range(1, 7):
        # The reply at turn 4 writes two of the first result's names: it stays whole.
        reply = f"Read module_{turn}.py" + (", then load_config and parse_settings" * (turn == 4))
        later += [
            ContextItem(
                f"t{turn}",
                "tool",
                rendered=f"module_{turn}.py defines helper_{turn}_a and helper_{turn}_b\n" * 30,
                tool_name="cat",
                tool_call_id=f"c{turn}",
                turn=turn,
                tokens=400,
                arguments=f'{{"path": "src/module_{turn}.py"}}',
            ),
            ContextItem(f"a{turn}", "assistant", rendered=reply, turn=turn, tokens=9),
        ]
    commit = ContextCommit("s").with_items(later)
    rule = age_tool_results(
        3, 200, 20, 10, (), used_tail_turns=4, stub_hint_chars=40, used_hint_chars=120,
        stub_hints_unseen=True,
    )  # fmt: skip
    runs = []
    for _ in range(3):
        read.clear()
        commit = rule(commit, Facts(head_turn=8, tokenizer=RULER))
        runs.append(len(read))
    assert commit.items[0].state is State.FULL
    assert sum(i.state is State.AGED for i in commit.items) >= 4
    assert runs[0] > 10
    assert runs[2] == 0


def test_past_a_held_result_only_results_that_can_age_are_asked_about(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Work counted: the mark stays before a held result, so what follows is only asked if it can age.

    Summarized results past it cannot change; each was checked for names in use at every
    batch point (at 10k messages, thousands a batch point).
    """
    asked: list[str] = []
    in_use = aging._in_use

    def counted(item: ContextItem, used: frozenset[str]) -> bool:
        asked.append(item.source_node_id)
        return in_use(item, used)

    monkeypatch.setattr(aging, "_in_use", counted)
    gone = [
        ContextItem(f"s{n}", "tool", state="summarized", rendered="old output", tool_name="cat",
                    tool_call_id=f"s{n}", turn=1, tokens=3)
        for n in range(20)
    ]  # fmt: skip
    fresh = ContextItem(
        "t2", "tool", rendered="plain output\n" * 40, tool_name="cat", tool_call_id="c2", turn=2
    )
    reply = "I will call load_config and then parse_settings on the new file."
    said = ContextItem("a4", "assistant", rendered=reply, turn=4, tokens=RULER.count(reply))
    held = ContextItem(
        "t0", "tool", rendered=SOURCE, tool_name="cat", tool_call_id="c0", turn=0, tokens=400
    )
    commit = ContextCommit("s").with_items([held, *gone, fresh, said])
    aged = age_tool_results(3, 200, 40, 0, (), used_tail_turns=4)(
        commit, Facts(head_turn=8, tokenizer=RULER)
    )
    states = [i.state for i in aged.items]
    assert states[:2] == [State.FULL, State.SUMMARIZED]
    assert states[21] is State.AGED
    assert asked == ["t0", "t2"]
