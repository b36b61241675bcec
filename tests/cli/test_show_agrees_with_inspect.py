"""`ctxrules show` says what the inspector's timeline says about each request's cached prefix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxrules import Context
from ctxrules.cli.main import main
from ctxrules.inspect.read import Reader
from ctxrules.store import open_store
from ctxrules.testing.responses import openai_response


def _loop_with_pins(path: Path) -> None:
    """A loop that pins the newest message before some requests (a pin stores a commit)."""
    with Context(model="gpt-4o", window=8_000, store=str(path), session="s") as ctx:
        ctx.add({"role": "user", "content": "Fix the parser."})
        for i in range(40):
            ctx.openai()
            ctx.record(openai_response(i, f"step {i}", [(f"c{i}", "read_file", {"path": "f.py"})]))
            ctx.add_tool_result(f"c{i}", f"line {i} value_{i} = compute({i})\n" * (i * 37 % 90))
            if i % 9 == 0:
                ctx.pin()
        ctx.openai()


def _show(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    assert main(["show", str(path), "s", "--limit", "0"]) == 0
    blocks = capsys.readouterr().out.split("\ncommit ")
    found = {}
    for block in blocks:
        commit = block.removeprefix("commit ").split()[0]
        found[commit] = next(line for line in block.splitlines() if line.startswith("  cache: "))
    return found


def test_a_pin_before_a_request_is_no_cache_break(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each request's cache line is the inspector's; a pin's own commit is marked not sent."""
    path = tmp_path / "s.sqlite"
    _loop_with_pins(path)
    lines = _show(path, capsys)
    store = open_store(str(path), read_only=True).unwrap()
    reader = Reader(store, 8_000)
    try:
        requests = reader.session("s").unwrap().overview["requests"]
    finally:
        reader.close()
    assert len(lines) > len(requests), "the pins stored commits no request sent"
    for row in requests[1:]:
        line = lines[row["commit"][:18]]
        if row["extends"]:
            assert line.startswith("  cache: extends the request before it"), (row, line)
        else:
            assert f"breaks at item {row['prefix_end']:,} of {row['items']:,}" in line, (row, line)
            # An upper bound: the provider reads up to its last breakpoint before the break.
            assert "tokens of history before it: at most these are read from the cache" in line
        assert f"({row['prefix_tokens']:,} tokens" in line, (row, line)
    sent = {row["commit"][:18] for row in requests}
    for commit, line in lines.items():
        assert (commit in sent) != bool(re.search(r"cache: not sent: a newer commit", line)), line
