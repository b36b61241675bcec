"""The declarative-rules page lists exactly the features, operators and fields the code knows."""

from __future__ import annotations

import re
from pathlib import Path

from ctxrules.spec import FEATURES, OPERATORS
from ctxrules.spec.features import FEATURE_NAMES
from ctxrules.spec.template import FIELD_FORMS

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "declarative-rules.md").read_text(
    encoding="utf-8"
)


def table_keys(heading: str) -> list[str]:
    """The back-quoted first cells of the table under ``heading``, in order."""
    section = PAGE.split(heading, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)`", section, flags=re.MULTILINE)


def test_feature_table_matches_the_code() -> None:
    """Every feature is documented with its type, in the order error messages list them."""
    assert table_keys("## `when`: features") == list(FEATURE_NAMES)
    for name, feature in FEATURES.items():
        assert re.search(rf"^\| `{name}` \| {feature.kind} \|", PAGE, flags=re.MULTILINE)


def test_operator_table_matches_the_code() -> None:
    """Every operator appears in the operator table, and nothing else does."""
    rows = re.findall(
        r"^\| (`[^|]+) \|",
        PAGE.split("## `when`: operators", 1)[1].split("\n## ", 1)[0],
        flags=re.MULTILINE,
    )
    documented = [op for row in rows for op in re.findall(r"`(\w+)`", row)]
    assert sorted(documented) == sorted(OPERATORS)


def test_template_table_matches_the_code() -> None:
    """Every template field form is documented."""
    assert table_keys("## Templates") == list(FIELD_FORMS)
