"""The integrations' tests share helpers that live beside them (``agents_items.py``).

``postgres`` is a throwaway PostgreSQL server (tests/store/pg_server.py), skipped where
none can run: the adapters promise the same on both backends.
"""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
import pg_server


@pytest.fixture(scope="session")
def postgres() -> Iterator[pg_server.Server]:
    """A throwaway PostgreSQL server for the session."""
    yield from pg_server.running()
