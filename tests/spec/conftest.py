"""Fixtures for spec tests: the specs folder and an importable example-rules module."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SPECS = HERE.parents[1] / "specs"


@pytest.fixture
def example_rules() -> Iterator[str]:
    """Make ``example_rules`` importable (tests run with --import-mode=importlib) and forget it after."""
    sys.path.insert(0, str(HERE))
    try:
        yield "example_rules"
    finally:
        sys.path.remove(str(HERE))
        sys.modules.pop("example_rules", None)
