"""``ctxrules show`` of a session whose content holds terminal escape sequences (issue 33 item 7).

A session id, a title or an item's text came from the session's content (a tool result, a
web page, a reply) and went to the terminal raw: a window title, an OSC 52 clipboard write,
a screen clear. They are now written as escapes, read but not obeyed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrules.cli.main import main
from ctxrules.engine.context import Context
from ctxrules.tokens import HeuristicCounter

HOSTILE = (
    "\x1b]0;owned\x07",  # window title
    "\x1b]52;c;aGVsbG8=\x07",  # clipboard write
    "\x1b[2J\x1b[H",  # screen clear
    "\x9b31m",  # a C1 control sequence introducer
    "\u202egnp.exe",  # reorders the line
)


def test_show_writes_no_control_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Listing and timeline: every hostile sequence shown escaped; no control byte but newlines."""
    store = tmp_path / "s.db"
    session = "id" + HOSTILE[0]
    with Context(
        model="gpt-4o",
        window=16_000,
        store=str(store),
        session=session,
        tokenizer=HeuristicCounter(),
    ) as ctx:
        for text in HOSTILE:
            ctx.add({"role": "user", "content": f"look {text} here"})
            ctx.openai()
    capsys.readouterr()
    assert main(["show", str(store)]) == 0
    assert main(["show", str(store), session]) == 0
    out, err = capsys.readouterr()
    written = out + err
    assert "\\x1b]0;owned" in written
    for char in written:
        assert char == "\n" or not (ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F), repr(char)
    assert "\u202e" not in written
