"""The hash-seed children: what they import, and that they count with the check's rulers."""

from __future__ import annotations

import ast
import subprocess
import sys

from ctxrules.checker.child import ruler
from ctxrules.testing.ruler import RULER_NAMES, check_ruler, ruler_name

TEXTS = ("", "def load_config(): return 1\n", "上下文压缩 src/main.py <|endoftext|>", "x " * 900)


def test_a_child_loads_neither_hypothesis_nor_the_strategies() -> None:
    """A child imports what running rules needs; the search's modules would triple its start."""
    child = subprocess.run(
        [sys.executable, "-c", "import sys, ctxrules.checker.child; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(ast.literal_eval(child.stdout))
    assert "ctxrules.checker.child" in loaded
    assert not loaded & {"hypothesis", "ctxrules.testing", "ctxrules.checker.runner"}


def test_a_child_counts_with_the_ruler_of_each_name() -> None:
    """Invariant 8: a case is rerun with the ruler it was counted with, giving the same counts."""
    for name in RULER_NAMES:
        rebuilt = ruler(name)
        assert ruler_name(rebuilt) == name
        assert [rebuilt.count(t) for t in TEXTS] == [check_ruler(name).count(t) for t in TEXTS]
