"""The core stays free of the frameworks; a missing extra is a clear ImportError."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "ctxrules"
FRAMEWORKS = ("langchain", "langchain_core", "langgraph", "agents")


def _imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    return {name.split(".")[0] for name in names}


def test_nothing_outside_integrations_imports_a_framework() -> None:
    """Only ctxrules/integrations/ may import LangChain, LangGraph or the Agents SDK."""
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "integrations" not in path.parts and _imported(path) & set(FRAMEWORKS)
    ]
    assert offenders == []


# A module set to None in sys.modules is one Python reports as not installed.
BLOCK = """
import sys
sys.modules.update(dict.fromkeys({blocked!r}))
import ctxrules, ctxrules.engine, ctxrules.importers, ctxrules.integrations
try:
    import {module}
except ImportError as err:
    print(err)
"""


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        ("ctxrules.integrations.langchain", ("langgraph",), "langchain"),
        ("ctxrules.integrations.openai_agents", ("agents",), "agents"),
    ],
)
def test_a_missing_extra_names_itself(module, blocked, extra) -> None:
    """Without its framework an integration fails to import with the pip line to fix it."""
    script = BLOCK.format(blocked=set(blocked), module=module)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert f"pip install 'ctxrules[{extra}]'" in out
