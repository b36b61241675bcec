"""`bench/verify_store.py` on small stores: it makes each store, verifies it and prints a row."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

from tests.module_files import load_file

BENCH = Path(__file__).resolve().parents[2] / "bench" / "verify_store.py"


def _bench() -> ModuleType:
    return load_file("ctxrules_verify_store_bench", BENCH)


def test_each_size_is_made_verified_and_timed(tmp_path: Path) -> None:
    """Two sizes: each row names the messages stored, the turns, a time, and a clean verify."""
    table = _bench().measure([90, 300], 3, None, tmp_path)
    rows = table.splitlines()[2:]
    assert len(rows) == 2, table
    for row, size in zip(rows, (90, 300), strict=True):
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        messages = int(cells[0].replace(",", ""))
        # The history, then three turns of a user message, a call and its result.
        assert messages == size + 3 * 3, row
        assert int(cells[1]) == size // 3 + 3, row
        assert float(cells[3]) > 0
        assert re.fullmatch(rf"ok: {messages} nodes, 0 violations", cells[5]), row
