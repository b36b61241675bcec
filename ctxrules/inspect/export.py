"""`--export`: one session's views as one self-contained HTML file, to attach to a bug report.

The page's own script and style are inlined and allowed by their hashes alone; the data is
JSON, gzipped and base64-encoded into an inert block (no character of it can end the block
or start markup), and the page puts every text in as text. Node texts are cut, longest
first, only when the file would pass its size budget. A long session is exported as the page
first shows it: its newest history rows and requests, the page saying what was left out.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from typing import Any

from returns.result import Failure, Result, Success

from ctxrules.inspect.assets import static_text
from ctxrules.inspect.read import UNREAD, Reader
from ctxrules.inspect.views import ItemTable, node_view, request_detail

#: The file's default size budget: small enough to attach anywhere.
BUDGET = 5_000_000
#: Node texts are never cut shorter than this many characters to fit the budget.
MIN_NODE_CHARS = 2_000


def _packed(payload: dict[str, Any]) -> str:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return base64.b64encode(gzip.compress(text.encode(), compresslevel=9, mtime=0)).decode()


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def page(data_block: str, title: str) -> str:
    """The HTML file around a packed data block: the page's script and style inlined."""
    script, style = static_text("app.js"), static_text("app.css")
    for part in (script, style):
        # Our own files: neither may close its element early.
        assert "</" not in part.replace("</ ", ""), "an inlined file must not contain '</'"  # noqa: S101
    csp = (
        f"default-src 'none'; script-src {_hash(script)}; style-src {_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    safe_title = (
        title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        f"<title>ctxrules inspect · {safe_title}</title>\n<style>{style}</style>\n</head>\n<body>\n"
        '<header><h1>ctxrules inspect</h1><span id="where"></span><span id="live">exported</span></header>\n'
        '<main id="app"><p id="status">Loading…</p></main>\n'
        f'<script type="application/octet-stream" id="ctxrules-data">{data_block}</script>\n'
        f"<script>{script}</script>\n</body>\n</html>\n"
    )


def export_html(
    reader: Reader, session_id: str, *, label: str = "", budget: int = BUDGET
) -> Result[str, str]:
    """The session's page as one file of at most ``budget`` bytes, node texts cut if need be."""
    found = reader.session(session_id)
    if isinstance(found, Failure):
        return Failure(found.failure())
    data = found.unwrap()
    table = ItemTable()
    try:
        requests = [request_detail(r, table, read=reader.read_chunk) for r in data.requests]
        # The nodes the history shows (of a long session, its newest rows: the page says how
        # many came before), in append order: the same file from every process.
        history = data.overview["history"]
        calls = [c for n in history["nodes"] if (c := data.nodes.get(n["id"])) is not None]
    except UNREAD as error:
        return Failure(f"session {session_id!r} could not be read: {error}")
    payload: dict[str, Any] = {
        "store": label,
        "overview": {**data.overview, "latest": None},
        "requests": requests,
        "table": table.rows,
    }
    overhead = len(page("", session_id).encode())
    limit: int | None = None
    while True:
        payload["nodes"] = {call.id: node_view(call, limit) for call in calls}
        block = _packed(payload)
        if overhead + len(block) <= budget:
            return Success(page(block, session_id))
        longest = max(
            (len(n["output"]) + len(n["input"]) for n in payload["nodes"].values()), default=0
        )
        limit = (limit if limit is not None else longest) // 2
        if limit < MIN_NODE_CHARS:
            return Failure(
                f"session {session_id!r} does not fit {budget:,} bytes even with node texts "
                f"cut to {MIN_NODE_CHARS:,} characters"
            )
