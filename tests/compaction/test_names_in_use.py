"""The names in use: a summary keeps the names its folded assistant messages and calls wrote."""

from __future__ import annotations

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.compaction.apply import in_use_chars, with_folds
from ctxrules.compaction.in_use import names_in_line, names_line
from ctxrules.compaction.plan import CompactionPlan
from ctxrules.compaction.prompts import prompt_messages
from ctxrules.compaction.summarizer import structural_summary
from ctxrules.rules.facts import Facts


def _fold(items: list[ContextItem], text: str, chars: int = 1_000) -> str:
    base = ContextCommit("s").append_items(items)
    positions = tuple(range(len(items)))
    plan = CompactionPlan(base.id, None, positions, 0, (), None, prompt_messages(""), 0)
    return with_folds(plan, base, text, in_use=chars)


def test_a_summary_names_what_the_assistant_wrote_not_what_results_held() -> None:
    """The assistant's text and call arguments' values count; a result's names and JSON keys do not."""
    items = [
        ContextItem("u1", "user", rendered="fix the loader"),
        ContextItem(
            "t1",
            "tool",
            rendered="def load_config_file(): ...\ndef unrelated_helper(): ...",
            tool_name="Read",
            arguments='{"file_path": "src/app/loader.py"}',
        ),
        ContextItem("a1", "assistant", rendered="`load_config_file` drops the default."),
    ]
    text = _fold(items, "[user] fix the loader")
    assert names_in_line(text) == ("src/app/loader.py", "load_config_file")
    assert "unrelated_helper" not in text
    assert "file_path" not in names_in_line(text)
    # Off (the default of with_folds): no line.
    assert names_in_line(_fold(items, "[user] fix the loader", chars=0)) == ()


def test_a_chained_summary_merges_the_earlier_line_newest_kept() -> None:
    """The second summary keeps the first one's names before its own, once, bounded."""
    first = _fold([ContextItem("a1", "assistant", rendered="see parse_args_v2")], "one")
    summary = ContextItem("sm_1", "assistant", state="summary", rendered=first)
    later = ContextItem("a2", "assistant", rendered="now cli.main_entry")
    second = _fold([summary, later], first)
    assert names_in_line(second) == ("parse_args_v2", "cli.main_entry")
    assert second.count("[Names in use:") == 1
    # Room for one name: the newest written is the one kept, the other counted.
    short = _fold([summary, later], first, chars=len("cli.main_entry") + 2)
    assert names_in_line(short) == ("cli.main_entry",)
    assert "; and 1 earlier]" in short


def test_names_the_summary_shows_are_left_out() -> None:
    """A name already in the summary's text takes no room in the line."""
    items = [ContextItem("a1", "assistant", rendered="edit load_config_file and cli.run_main")]
    text = _fold(items, "[assistant] edit load_config_file")
    assert names_in_line(text) == ("cli.run_main",)
    assert names_line(["a_b"], shown="x a_b y") == ""


def test_a_path_the_trail_names_takes_no_room_in_the_names_line() -> None:
    """A file the agent wrote and then cited is named once, by the files-written line."""
    items = [
        ContextItem(
            "t1",
            "tool",
            rendered="ok",
            tool_name="Write",
            arguments='{"file_path": "src/app/loader.py", "content": "x = 1"}',
        ),
        ContextItem("a1", "assistant", rendered="Wrote src/app/loader.py; next cli.run_main."),
    ]
    text = _fold(items, "[user] fix the loader")
    assert "[Files written so far: src/app/loader.py]" in text
    assert names_in_line(text) == ("cli.run_main",)
    assert text.count("src/app/loader.py") == 1


def test_the_line_shrinks_with_a_small_window() -> None:
    """Below an input budget of 16,000 tokens the line's room shrinks as the trail's does."""
    assert in_use_chars(Facts(context_window=8_000)) < in_use_chars(Facts(context_window=32_000))
    line = names_line(f"module_{i}.func_{i}" for i in range(1_000))
    assert len(line) < 2_100
    assert "module_999.func_999" in line


def test_a_chained_structural_summary_leaves_the_old_line_to_the_merge() -> None:
    """The earlier line is not carried inside the summary's budget; the merge writes it once."""
    first = _fold([ContextItem("a1", "assistant", rendered="see parse_args_v2")], "[user] one")
    plan = CompactionPlan("c", None, (0,), 1, (("user", "two"),), first, prompt_messages(""), 0)
    text = structural_summary(plan)
    assert "[Names in use:" not in text
    assert text.startswith("[user] one")
    summary = ContextItem("sm_1", "assistant", state="summary", rendered=first)
    merged = _fold([summary, ContextItem("u2", "user", rendered="two")], text)
    assert names_in_line(merged) == ("parse_args_v2",)
