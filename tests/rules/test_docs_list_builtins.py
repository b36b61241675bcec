"""docs/builtin-rules.md lists every built-in with every parameter, kind and default."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrules.rules import builtins

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "builtin-rules.md").read_text(
    encoding="utf-8"
)


def _rows(rule_name: str) -> dict[str, list[str]]:
    section = PAGE.split(f"## `{rule_name}`", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("| `")]
    return {cells[0].strip().strip("`"): [c.strip() for c in cells[1:]] for cells in rows}


@pytest.mark.parametrize("name", sorted(builtins()))
def test_every_parameter_is_documented_with_kind_and_default(name: str) -> None:
    """Each parameter of the built-in appears in its table with the registry's kind and default."""
    rows = _rows(name)
    rule = builtins()[name]
    assert set(rows) == {p.name for p in rule.params}
    for param in rule.params:
        kind, default = rows[param.name][0], rows[param.name][1]
        assert kind == param.kind
        shown = ", ".join(param.default) if isinstance(param.default, list) else str(param.default)
        assert default.strip("`") == shown
