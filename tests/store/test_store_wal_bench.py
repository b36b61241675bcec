"""`bench/store_wal.py` on a small session: the WAL of the turns is read back and laid out by relation."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pg_server
import pytest

from tests.module_files import load_file

BENCH = Path(__file__).resolve().parents[2] / "bench" / "store_wal.py"


def _bench() -> ModuleType:
    return load_file("ctxrules_store_wal_bench", BENCH)


def test_a_turns_wal_is_laid_out_by_the_relations_it_changed(
    postgres_server: pg_server.Server,
) -> None:
    """Every turn adds nodes and items: their tables and keys are in the table, with their bytes."""
    pytest.importorskip("psycopg")
    bench = _bench()
    dump_bin = bench.waldump(postgres_server.bindir)
    if dump_bin is None:
        pytest.skip("pg_waldump is not installed beside the server")
    table = bench.measure(200, 3, None, dump_bin, postgres_server)
    head = re.search(r"([\d.]+) kB of WAL a turn over 3 turns", table)
    assert head is not None, table
    assert float(head.group(1)) > 0
    rows = {
        line.split(" | ")[0].strip("| "): float(line.rsplit(" | ", 1)[1].strip(" |"))
        for line in table.splitlines()[3:]
    }
    assert {"nodes", "nodes_pkey", "items_pkey"} <= set(rows), table
    assert all(kb >= 0 for kb in rows.values())
    assert sum(rows.values()) <= float(head.group(1)) * 1.01
