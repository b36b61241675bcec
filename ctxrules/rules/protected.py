"""Protected tools: names matched without regard to case, underscores or hyphens.

Agents spell the same tool differently (Claude Code ``TodoWrite``, LangChain agents
``write_todos``, a custom agent ``todo_write``); a spec lists names once and matches them all.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Tools whose results stay whole: the agent's plan, its task list, sub-agent reports and
#: its searches. Per agent: Claude Code ``TodoWrite``, ``TaskCreate``, ``TaskUpdate``,
#: ``TaskList``, ``Task``, ``WebSearch``; LangChain deep agents ``write_todos``,
#: ``web_search``; OpenCode ``todowrite``, ``todoread`` (reference 000 §5's list first).
PROTECTED_TOOLS = (
    "todo_create",
    "todo_update",
    "todo_list",
    "todo_write",
    "todo_read",
    "write_todos",
    "task",
    "task_create",
    "task_update",
    "task_list",
    "task_get",
    "web_search",
)


def tool_key(name: str | None) -> str:
    """The form names are compared in: lower case, without ``_``, ``-`` or spaces.

    >>> tool_key("TodoWrite") == tool_key("todo_write") == tool_key("todo-write")
    True
    """
    if not name:
        return ""
    return name.lower().replace("_", "").replace("-", "").replace(" ", "")


def protected_keys(names: Iterable[str]) -> frozenset[str]:
    """The keys of the protected names, for `is_protected`."""
    return frozenset(tool_key(n) for n in names)


def is_protected(tool_name: str | None, keys: frozenset[str]) -> bool:
    """Whether a tool is one of the protected ones.

    >>> is_protected("WebSearch", protected_keys(PROTECTED_TOOLS)), is_protected("Bash", frozenset())
    (True, False)
    """
    return bool(tool_name) and tool_key(tool_name) in keys
