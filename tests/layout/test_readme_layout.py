"""The README's layout table names every package of ctxrules, and only packages that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _packages() -> set[str]:
    return {
        path.parent.name
        for path in (ROOT / "ctxrules").glob("*/__init__.py")
        if not path.parent.name.startswith("_")
    }


def _listed() -> set[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| `ctxrules/([a-z_]+)/` \|", text, flags=re.MULTILINE))


def test_every_package_has_a_row_in_the_layout_table() -> None:
    """A new package without a row leaves users guessing where things live."""
    missing = _packages() - _listed()
    assert not missing, f"README layout table lacks: {sorted(missing)}"


def test_every_row_names_a_package_that_exists() -> None:
    """A renamed or removed package leaves a row pointing nowhere."""
    stale = _listed() - _packages()
    assert not stale, f"README layout table names missing packages: {sorted(stale)}"
