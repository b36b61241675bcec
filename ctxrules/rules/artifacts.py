"""The artifact trail: which files an agent's tool calls wrote, edited or created.

A compaction carries the trail in its summary (``Files written so far: …``), so the model
still knows which files it touched after the calls that touched them are folded away.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping

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
PATCH_FILE = re.compile(
    r"^\*\*\* (?:Add|Update) File: (.+)$|^\*\*\* Move to: (.+)$|^\+\+\+ (?:b/)?(\S+)",
    re.MULTILINE,
)
#: A path argument in JSON text that may have been cut (a capped call keeps its head).
_PATH_IN_JSON = re.compile(r'"(?:' + "|".join(PATH_KEYS) + r')"\s*:\s*"((?:[^"\\]|\\.){1,400})"')
#: The summary line that carries the trail.
FILES_LINE_PREFIX = "[Files written so far: "
#: Characters of paths the line names at most (the newest kept): a bound on the summary.
FILES_LINE_CHARS = 2_000
_FILES_LINE = re.compile(r"^\[Files written so far: (.*?)(?:; and \d+ earlier)?\]$", re.MULTILINE)


def normal_tool_name(name: str) -> str:
    """A tool name compared without case, ``_`` or ``-``."""
    return name.lower().replace("_", "").replace("-", "")


def written_paths(tool_name: str | None, arguments: str) -> tuple[str, ...]:
    r"""The files a call of ``tool_name`` with these JSON ``arguments`` writes (empty if none).

    >>> written_paths("Edit", '{"file_path": "/r/a.py", "old_string": "x"')
    ('/r/a.py',)
    >>> written_paths("Read", '{"file_path": "/r/a.py"}'), written_paths("apply_patch", '{"input": "*** Update File: b.py\\n"}')
    ((), ('b.py',))
    """
    name = normal_tool_name(tool_name or "")
    if name not in WRITE_TOOLS and name not in EDITOR_TOOLS and name != "applypatch":
        return ()
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    if name == "applypatch":
        return tuple(dict.fromkeys(patched_files(_patch_text(parsed, arguments))))
    if not isinstance(parsed, Mapping):
        # A capped call's arguments are cut JSON; the path comes first in every file tool.
        if name in EDITOR_TOOLS and not any(f'"{c}"' in arguments for c in EDITOR_WRITES):
            return ()
        match = _PATH_IN_JSON.search(arguments)
        return (match.group(1),) if match else ()
    if name in EDITOR_TOOLS and parsed.get("command") not in EDITOR_WRITES:
        return ()
    paths = (parsed.get(key) for key in PATH_KEYS)
    found = next((p.strip() for p in paths if isinstance(p, str) and p.strip()), None)
    return () if found is None else (found,)


#: Characters of a call's arguments `reads_file` looks for a path in: paths come first.
_READ_ARGS_CHARS = 2_000


def reads_file(tool_name: str | None, arguments: str) -> bool:
    r"""Whether a call of ``tool_name`` with these JSON ``arguments`` reads files: it names a path and writes none.

    Its result is the workspace's content (source the agent may edit or model its own
    files on, a listing, matches), not a command's output.

    >>> reads_file("Read", '{"file_path": "/r/a.py"}'), reads_file("Grep", '{"pattern": "x", "path": "src"}')
    (True, True)
    >>> reads_file("Edit", '{"file_path": "/r/a.py"}'), reads_file("bash", '{"command": "cat a.py"}')
    (False, False)
    >>> reads_file("str_replace_editor", '{"command": "view", "path": "/r/a.py"}')
    True
    """
    head = arguments[:_READ_ARGS_CHARS]
    if _PATH_IN_JSON.search(head) is None:
        return False
    name = normal_tool_name(tool_name or "")
    if name in WRITE_TOOLS or name == "applypatch":
        return False
    return name not in EDITOR_TOOLS or not any(f'"{c}"' in head for c in EDITOR_WRITES)


def _patch_text(parsed: object, raw: str) -> str:
    if isinstance(parsed, Mapping):
        for key in ("input", "patch", "diff"):
            value = parsed.get(key)
            if isinstance(value, str):
                return value
    return raw if isinstance(parsed, str) or parsed is None else ""


def patched_files(patch: str) -> Iterator[str]:
    """The files an ``apply_patch`` patch adds, updates or moves to (not /dev/null)."""
    for match in PATCH_FILE.finditer(patch):
        found = next(group for group in match.groups() if group is not None).strip()
        if found != "/dev/null":
            yield found


def files_in_line(text: str) -> tuple[str, ...]:
    """The files a summary's trail line names (none when it has no such line)."""
    match = _FILES_LINE.search(text)
    return tuple(p for p in match.group(1).split(", ") if p) if match else ()


def files_line(paths: Iterable[str], chars: int = FILES_LINE_CHARS) -> str:
    """The trail line naming ``paths`` (each once, in order of last write), newest kept first.

    At most ``chars`` characters of paths are named; the rest are counted.

    >>> files_line(["a.py", "b.py", "a.py"])
    '[Files written so far: b.py, a.py]'
    >>> files_line(["a.py", "b.py"], chars=6), files_line([])
    ('[Files written so far: b.py; and 1 earlier]', '')
    """
    return newest_listed(FILES_LINE_PREFIX, paths, chars)


def newest_listed(prefix: str, entries: Iterable[str], chars: int) -> str:
    """``prefix`` and the newest of ``entries`` (each once, by its last use) that fit in ``chars``.

    The rest are counted; ``]`` ends the line.

    >>> newest_listed("[Seen: ", ["a", "bb", "a", "c"], 7)
    '[Seen: a, c; and 1 earlier]'
    """
    ordered = list(reversed(dict.fromkeys(reversed(list(entries)))))
    kept: list[str] = []
    room = chars
    for entry in reversed(ordered):
        room -= len(entry) + 2
        if room < 0:
            break
        kept.append(entry)
    if not kept:
        return ""
    earlier = len(ordered) - len(kept)
    more = f"; and {earlier} earlier" if earlier else ""
    return f"{prefix}{', '.join(reversed(kept))}{more}]"


def without_files_line(text: str) -> str:
    """The text without a trail line (a chained summary writes its own, merged)."""
    return _FILES_LINE.sub("", text)
