"""What an installed package offers: the everyday names, built-in specs in step with specs/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ctxrules
from ctxrules.spec.builtin import BUILTIN_DIR, builtin_specs

REPO_SPECS = Path(__file__).resolve().parents[2] / "specs"


def test_every_everyday_name_loads() -> None:
    """Each name in ctxrules.__all__ resolves (lazily) to an object."""
    for name in ctxrules.__all__:
        assert getattr(ctxrules, name) is not None, name


def test_import_ctxrules_stays_light() -> None:
    """Importing the package loads neither Hypothesis, the engine nor the SDKs."""
    code = "import sys, ctxrules; print(sorted(m for m in ('hypothesis', 'ctxrules.engine', 'openai') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_package_specs_are_the_repository_specs() -> None:
    """ctxrules/specs/ (shipped in the wheel) and specs/ (for readers) hold identical files."""
    shipped = {p.name: p.read_bytes() for p in BUILTIN_DIR.glob("*.toml")}
    browsed = {p.name: p.read_bytes() for p in REPO_SPECS.glob("*.toml")}
    differ = sorted(n for n in shipped.keys() | browsed.keys() if shipped.get(n) != browsed.get(n))
    assert not differ, f"edit both copies (ctxrules/specs/ and specs/) of {differ}"
    assert builtin_specs() == ("cache-sensitive", "default", "small-window")
