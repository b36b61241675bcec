"""The artifact trail: the files an agent wrote, edited or created, read from its tool calls.

Only file tools count: Claude Code's ``Write``, ``Edit``, ``MultiEdit`` and ``NotebookEdit``;
the generic ``write_file``, ``edit_file``, ``create_file``, ``str_replace`` and ``apply_patch``;
and ``str_replace_based_edit_tool``/``str_replace_editor`` with ``create``, ``str_replace`` or
``insert``. A shell command that redirects into a file is out of scope: telling a write from
a read in arbitrary shell needs a shell parser, and guessing would make the figure noisy.
"""

from __future__ import annotations

from collections.abc import Mapping

from ctxrules.dag import Call, Frozen, Role
from ctxrules.rules.artifacts import (
    EDITOR_TOOLS,
    EDITOR_WRITES,
    PATH_KEYS,
    WRITE_TOOLS,
    normal_tool_name,
    patched_files,
)


def _patch_text(arguments: Frozen) -> str:
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, Mapping):
        for key in ("input", "patch", "diff"):
            value = arguments.get(key)
            if isinstance(value, str):
                return value
    return ""


def written_files(call: Call) -> tuple[str, ...]:
    r"""The files a tool call writes, edits or creates (empty for any other call).

    >>> written_files(Call("t1", "tool", name="Edit", input={"file_path": "/r/a.py"}))
    ('/r/a.py',)
    >>> written_files(Call("t2", "tool", name="str_replace_based_edit_tool", input={"command": "view", "path": "a"}))
    ()
    >>> written_files(Call("t3", "tool", name="apply_patch", input={"input": "*** Begin Patch\n*** Update File: src/x.py\n"}))
    ('src/x.py',)
    """
    name = normal_tool_name(call.name) if call.role is Role.TOOL else ""
    arguments = call.input
    if name == "applypatch":
        return tuple(dict.fromkeys(patched_files(_patch_text(arguments))))
    writes = name in WRITE_TOOLS or (
        name in EDITOR_TOOLS
        and isinstance(arguments, Mapping)
        and arguments.get("command") in EDITOR_WRITES
    )
    if not writes or not isinstance(arguments, Mapping):
        return ()
    paths = (arguments.get(key) for key in PATH_KEYS)
    found = next((p.strip() for p in paths if isinstance(p, str) and p.strip()), None)
    return () if found is None else (found,)
