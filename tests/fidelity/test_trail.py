"""Which tool calls put a file on the artifact trail, and which do not."""

from __future__ import annotations

import pytest

from ctxrules.dag import Call
from ctxrules.fidelity import written_files

WRITES = [
    ("Write", {"file_path": "/r/a.py", "content": "x"}, ("/r/a.py",)),
    ("Edit", {"file_path": "/r/a.py", "old_string": "x", "new_string": "y"}, ("/r/a.py",)),
    ("MultiEdit", {"file_path": "/r/b.py", "edits": []}, ("/r/b.py",)),
    ("NotebookEdit", {"notebook_path": "/r/n.ipynb", "new_source": "x"}, ("/r/n.ipynb",)),
    (
        "write_file",
        {"description": "d", "path": "out/index.html", "content": "x"},
        ("out/index.html",),
    ),
    ("edit_file", {"path": "a.txt"}, ("a.txt",)),
    ("create-file", {"path": "b.txt"}, ("b.txt",)),
    ("str_replace", {"path": "c.txt", "old_str": "a", "new_str": "b"}, ("c.txt",)),
    ("str_replace_based_edit_tool", {"command": "create", "path": "d.py"}, ("d.py",)),
    ("str_replace_editor", {"command": "insert", "path": "e.py"}, ("e.py",)),
    (
        "apply_patch",
        {
            "input": "*** Begin Patch\n*** Add File: n.py\n*** Update File: o.py\n*** Move to: p.py\n"
        },
        ("n.py", "o.py", "p.py"),
    ),
    ("apply_patch", "--- a/q.py\n+++ b/q.py\n@@\n", ("q.py",)),
]

NOT_WRITES = [
    ("Read", {"file_path": "/r/a.py"}),
    ("Bash", {"command": "echo hi > /r/a.py"}),
    ("str_replace_based_edit_tool", {"command": "view", "path": "d.py"}),
    ("Write", {"content": "no path"}),
    ("Write", "not a mapping"),
]


@pytest.mark.parametrize(("name", "arguments", "files"), WRITES)
def test_file_tools_name_the_files_they_write(
    name: str, arguments: object, files: tuple[str, ...]
) -> None:
    """Each file tool's path argument is on the trail."""
    assert written_files(Call("t", "tool", name=name, input=arguments)) == files


@pytest.mark.parametrize(("name", "arguments"), NOT_WRITES)
def test_reads_shell_and_views_write_nothing(name: str, arguments: object) -> None:
    """Reads, views, shell redirections (out of scope) and calls without a path add nothing."""
    assert written_files(Call("t", "tool", name=name, input=arguments)) == ()


def test_only_tool_nodes_write() -> None:
    """An assistant node named like a tool is not a tool call."""
    assert written_files(Call("a", "assistant", name="Write", input={"file_path": "x"})) == ()
