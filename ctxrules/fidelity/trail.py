"""The artifact trail: the files an agent wrote, edited or created, read from its tool calls.

Only file tools count: Claude Code's ``Write``, ``Edit``, ``MultiEdit`` and ``NotebookEdit``;
the generic ``write_file``, ``edit_file``, ``create_file``, ``str_replace`` and ``apply_patch``;
and ``str_replace_based_edit_tool``/``str_replace_editor`` with ``create``, ``str_replace`` or
``insert``. A shell command that redirects into a file is out of scope: telling a write from
a read in arbitrary shell needs a shell parser, and guessing would make the figure noisy.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from ctxrules.dag import Call, Frozen, Role

#: Tool names (compared without case, ``_`` or ``-``) whose calls write the file they name.
WRITE_TOOLS = frozenset(
    {
        "write",
        "edit",
        "multiedit",
        "notebookedit",
        "writefile",
        "editfile",
        "createfile",
        "strreplace",
    }
)
#: Editor tools that write only for some commands.
EDITOR_TOOLS = frozenset({"strreplacebasededittool", "strreplaceeditor"})
#: The editor commands that write.
EDITOR_WRITES = frozenset({"create", "str_replace", "insert"})
#: Argument names a file tool puts its path in, in order of preference.
PATH_KEYS = ("file_path", "notebook_path", "path", "filename", "file")
#: The files an ``apply_patch`` patch adds, updates or moves to.
_PATCH_FILE = re.compile(
    r"^\*\*\* (?:Add|Update) File: (.+)$|^\*\*\* Move to: (.+)$|^\+\+\+ (?:b/)?(\S+)",
    re.MULTILINE,
)


def _normal(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


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
    name = _normal(call.name) if call.role is Role.TOOL else ""
    arguments = call.input
    if name == "applypatch":
        return tuple(dict.fromkeys(_patched(_patch_text(arguments))))
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


def _patched(patch: str) -> Iterator[str]:
    for match in _PATCH_FILE.finditer(patch):
        found = next(group for group in match.groups() if group is not None).strip()
        if found != "/dev/null":
            yield found
