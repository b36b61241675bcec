"""The artifact trail: a call's path survives its cut, and a summary names the files written."""

from __future__ import annotations

import json

from ctxrules.commit import ContextCommit, ContextItem
from ctxrules.compaction.apply import with_folds
from ctxrules.compaction.plan import CompactionPlan
from ctxrules.compaction.prompts import prompt_messages
from ctxrules.rules.artifacts import files_in_line, files_line, written_paths
from ctxrules.rules.cap import cap_tool_result
from ctxrules.rules.facts import Facts
from ctxrules.rules.tool_aging import aged_arguments

WRITE = json.dumps({"content": "package main\n" * 400, "file_path": "/repo/cmd/main.go"})


def test_a_capped_write_keeps_its_path_and_stays_json() -> None:
    """The cap cuts the content, not the path that follows it."""
    item = ContextItem("t1", "tool", rendered="ok", tool_name="Write", arguments=WRITE)
    capped = cap_tool_result(4000, 0.33, 400).on_arrival(item, Facts())
    assert len(capped.arguments) <= 400
    assert json.loads(capped.arguments)["file_path"] == "/repo/cmd/main.go"
    assert "recall h:" in capped.arguments


def test_an_aged_call_keeps_its_short_fields_whole() -> None:
    """At 200 characters an aged Write still names the file (was: the content's head only)."""
    aged = aged_arguments(WRITE, 200)
    assert json.loads(aged)["file_path"] == "/repo/cmd/main.go"
    assert aged_arguments("not json " * 50, 20) == "not json not json no…"


def test_written_paths_reads_file_tools_only() -> None:
    """Edits, writes and patches name files; reads and shell calls do not."""
    assert written_paths("MultiEdit", '{"file_path": "a.py", "edits": []}') == ("a.py",)
    assert written_paths("Read", '{"file_path": "a.py"}') == ()
    assert written_paths("str_replace_based_edit_tool", '{"command": "view", "path": "a"}') == ()
    assert written_paths("Edit", '{"file_path": "cut/b.py", "old_string": "x…[1 of 9') == (
        "cut/b.py",
    )


def test_a_chained_summary_carries_the_earlier_trail() -> None:
    """The second summary names files only the first one had seen, newest last."""
    first = [
        ContextItem(
            "t1", "tool", rendered="ok", tool_name="Write", arguments=aged_arguments(WRITE, 200)
        ),
        ContextItem(
            "t2", "tool", rendered="ok", tool_name="Edit", arguments='{"file_path": "b.py"}'
        ),
    ]
    base = ContextCommit("s").append_items(first)
    plan = CompactionPlan(base.id, None, (0, 1), 0, (), None, prompt_messages(""), 0)
    text = with_folds(plan, base, "summary one")
    assert files_in_line(text) == ("/repo/cmd/main.go", "b.py")
    summary = ContextItem("sm_1", "assistant", state="summary", rendered=text)
    later = ContextItem(
        "t3",
        "tool",
        rendered="ok",
        tool_name="Edit",
        arguments='{"file_path": "/repo/cmd/main.go"}',
    )
    base2 = ContextCommit("s").append_items([summary, later])
    plan2 = CompactionPlan(base2.id, None, (0, 1), 0, (), None, prompt_messages(""), 0)
    text2 = with_folds(plan2, base2, "summary two")
    assert files_in_line(text2) == ("b.py", "/repo/cmd/main.go")
    assert text2.count("[Files written so far:") == 1


def test_the_trail_line_is_bounded() -> None:
    """Thousands of files: the newest are named and the rest counted."""
    line = files_line(f"src/module_{i}/file.py" for i in range(1_000))
    assert len(line) < 2_100
    assert "src/module_999/file.py" in line
    assert "; and " in line
