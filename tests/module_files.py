"""A script that is not a module of a package (a bench, a docs example, a test's agent), loaded by its path."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_file(name: str, path: Path) -> ModuleType:
    """The module that running the file at ``path`` makes, named ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
