"""`ctxrules show` reads a long session as the inspector does: what it prints, not the history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pg_server
import pytest

from ctxrules import Context
from ctxrules.cli.main import main
from ctxrules.cli.timeline import CHANGES_SHOWN
from ctxrules.dag import bulk
from ctxrules.store import open_store
from ctxrules.testing.responses import openai_response


@pytest.fixture
def whole_graphs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many nodes were decoded by reading a session's whole graph."""
    count = [0]
    record = bulk.record_call

    def one(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return record(*args, **kwargs)

    monkeypatch.setattr(bulk, "record_call", one)
    return count


def _commits(out: str) -> int:
    return sum(line.startswith("commit ") for line in out.splitlines())


def _items(out: str) -> list[str]:
    return [line for line in out.splitlines() if line[:4] in ("  + ", "  ~ ", "  - ")]


def test_the_timeline_of_a_long_session_reads_no_node_and_no_whole_graph(
    long_plain: tuple[str, str],
    counted: dict[str, int],
    whole_graphs: list[int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """2,400 messages, four commits: no node read, the newest commit once, then what changed."""
    path, session = long_plain
    assert main(["show", path, session]) == 0
    out = capsys.readouterr().out
    assert _commits(out) == 4
    assert whole_graphs[0] == 0, "the history was read whole"
    assert counted["nodes"] == 0
    # Every chunk of the newest commit once (states), then only the chunks that changed.
    assert counted["items"] <= 2_400 + 12 * 64
    assert len(_items(out)) <= CHANGES_SHOWN * _commits(out)


def test_a_head_moved_off_every_commit_shows_the_newest_commit_with_a_note(
    long_store: tuple[str, str], whole_graphs: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    """A retry 20 rows back: no commit on its branch; the newest commit follows a note."""
    path, session = long_store
    assert main(["show", path, session]) == 0
    out = capsys.readouterr().out
    assert out.startswith("(no commit is stored for the branch at the head n_")
    assert _commits(out) == 4
    assert whole_graphs[0] == 0


def test_the_listing_reads_the_ends_of_a_session(
    long_store: tuple[str, str],
    counted: dict[str, int],
    whole_graphs: list[int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One row per session from its first and last node and its title, not its 2,400 nodes."""
    assert main(["show", long_store[0]]) == 0
    row = capsys.readouterr().out.splitlines()[1]
    assert row.split()[0] == long_store[1]
    assert "please do task 0" in row
    assert whole_graphs[0] == 0
    assert counted["nodes"] <= 3


def _loop(path: Path | str) -> None:
    with Context(model="gpt-4o", window=16_000, store=str(path), session="s") as ctx:
        ctx.add({"role": "user", "content": "Fix the parser."})
        for i in range(40):
            ctx.openai()
            ctx.record(openai_response(i, "step", [(f"c{i}", "read_file", {"path": f"f{i}.py"})]))
            text = f"line {i} value_{i} = compute({i}) in src/mod_{i % 7}.py\n"
            ctx.add_tool_result(f"c{i}", text * (i * 37 % 300 + 1))
        ctx.openai()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_each_commit_says_whether_it_extends_the_one_before_or_where_it_breaks_it(
    backend: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The cache line's position is the first item that differs from the previous request's."""
    path: Path | str = tmp_path / "s.sqlite"
    if backend == "postgresql":
        path = pg_server.fresh_schema_url(request.getfixturevalue("postgres"))
    _loop(path)
    assert main(["show", str(path), "s", "--limit", "0"]) == 0
    out = capsys.readouterr().out
    store = open_store(str(path), read_only=True).unwrap()
    try:
        by_id = {c.id: c for c in store.commits_for("s").unwrap()}
    finally:
        store.close()
    blocks = out.split("\ncommit ")
    assert len(blocks) == len(by_id)
    breaks = 0
    for block in blocks:
        commit_id = block.removeprefix("commit ").split()[0]
        commit = next(c for i, c in by_id.items() if i.startswith(commit_id))
        cache = next(line for line in block.splitlines() if line.startswith("  cache: "))
        # The request before: the newest older commit of another head (a head's last is sent).
        previous = commit
        while previous.parent_ids and previous.head_node_id == commit.head_node_id:
            previous = by_id[previous.parent_ids[0]]
        if previous.head_node_id == commit.head_node_id:
            assert "the first commit" in cache or "not sent" in cache, cache
            continue
        if "not sent" in cache:
            continue
        old, new = list(previous.items), list(commit.items)
        first = next(
            (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
            min(len(old), len(new)),
        )
        if first == len(old):
            assert cache.startswith("  cache: extends the request before it"), cache
        else:
            breaks += 1
            assert f"breaks at item {first:,} of {len(new):,}" in cache, cache
            assert "a batch point, from" in cache, "every break at this window is a batch point"
    assert breaks >= 2


def test_the_oldest_shown_commit_is_compared_with_its_parent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--limit 1 prints the newest commit's changes, not every item it holds."""
    path = tmp_path / "s.sqlite"
    _loop(path)
    assert main(["show", str(path), "s", "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert _commits(out) == 1
    assert 1 <= len(_items(out)) <= 3
    assert out.rstrip().endswith("older commits not shown: --limit N shows more, 0 all)")
