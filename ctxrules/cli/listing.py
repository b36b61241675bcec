"""What `ctxrules show STORE` prints for each session: format, nodes, first and last time, title."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import attrs

from ctxrules.cli.terminal import printable
from ctxrules.dag import Graph, Role
from ctxrules.engine.frame import session_source

if TYPE_CHECKING:  # the store is imported only by the commands that open one
    from ctxrules.inspect.source import NodeSource
    from ctxrules.store import SessionInfo

TITLE_WIDTH = 50
#: Nodes looked at for a title when the session stored none.
TITLE_NODES = 400


@attrs.frozen
class SessionLine:
    """One session of the listing."""

    id: str
    format: str
    nodes: int
    first: float | None
    last: float | None
    title: str


def first_user_text(graph: Graph) -> str:
    """The first user message of the graph, on one line, as a title when none was stored."""
    for node_id in graph.order:
        call = graph.nodes[node_id]
        if call.role is Role.USER:
            return " ".join(str(call.output_value()).split())
    return ""


def session_line(info: SessionInfo, nodes: NodeSource) -> SessionLine:
    """The listing line of a stored session: its row, its first and last node, its title.

    The times are the first and the last node's by seq (the order they were stored), as
    `ctxrules inspect` shows them; a long session's nodes are not read whole.
    """
    ids = nodes.ids()
    first = nodes.get(ids[0]) if ids else None
    last = nodes.get(ids[-1]) if ids else None
    return SessionLine(
        info.id,
        session_source(info.metadata),
        info.node_count,
        first.created_at if first is not None else None,
        last.created_at if last is not None else None,
        info.title or _first_user_text(nodes, ids),
    )


def _first_user_text(nodes: NodeSource, ids: Sequence[str]) -> str:
    # Looked for among the first nodes only: a title is the opening request, not a search.
    for node_id in ids[:TITLE_NODES]:
        call = nodes.get(node_id)
        if call is not None and call.role is Role.USER:
            return " ".join(str(call.output_value()).split())
    return ""


def _when(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M")


def _cut(text: str, width: int = TITLE_WIDTH) -> str:
    return printable(text if len(text) <= width else text[: width - 1] + "…")


def format_listing(lines: Sequence[SessionLine], hidden: int) -> str:
    """A table, one session a row, with a note on how many older sessions were left out.

    >>> print(format_listing([SessionLine("s1", "claude-code", 42, 0.0, 90.0, "Fix the bug")], 3))
    session  format       nodes  first             last              title
    s1       claude-code     42  1970-01-01 00:00  1970-01-01 00:01  Fix the bug
    (3 older sessions not shown: --limit N shows more)
    """
    rows = [("session", "format", "nodes", "first", "last", "title")]
    rows += [
        (
            printable(line.id),
            printable(line.format),
            str(line.nodes),
            _when(line.first),
            _when(line.last),
            _cut(line.title),
        )
        for line in lines
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    text = [
        "  ".join(
            (cell.rjust(widths[i]) if i == 2 else cell.ljust(widths[i]))
            for i, cell in enumerate(row[:5])
        )
        + "  "
        + row[5]
        for row in rows
    ]
    if hidden:
        text.append(f"({hidden} older sessions not shown: --limit N shows more)")
    return "\n".join(text)
