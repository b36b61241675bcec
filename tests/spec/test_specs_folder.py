"""Every spec in specs/ loads, runs, and has a version that ignores spelling."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from returns.result import Success

from ctxrules.commit import ContextCommit
from ctxrules.rules import Facts
from ctxrules.spec import load_spec
from ctxrules.testing import commits
from ctxrules.tokens import HeuristicCounter

SPECS = Path(__file__).resolve().parents[2] / "specs"
SPEC_FILES = sorted(SPECS.glob("*.toml"))


def test_the_three_shipped_specs_are_there() -> None:
    """The default, small-window and cache-sensitive specs ship in specs/."""
    assert {p.name for p in SPEC_FILES} >= {
        "default.toml",
        "small-window.toml",
        "cache-sensitive.toml",
    }


@pytest.mark.parametrize("path", SPEC_FILES, ids=[p.name for p in SPEC_FILES])
def test_every_shipped_spec_loads(path: Path) -> None:
    """Each spec loads from a Path, from a str path and from its text, to one version."""
    from_path = load_spec(path)
    assert isinstance(from_path, Success), from_path
    pipeline = from_path.unwrap()
    assert pipeline.rules
    assert load_spec(str(path)).unwrap().version == pipeline.version
    assert load_spec(path.read_text(encoding="utf-8")).unwrap().version == pipeline.version


@pytest.mark.parametrize("path", SPEC_FILES, ids=[p.name for p in SPEC_FILES])
def test_every_shipped_spec_needs_no_imports(path: Path) -> None:
    """No shipped spec references Python code, so none needs allow_imports."""
    assert ":" not in "".join(r.name for r in load_spec(path).unwrap().rules)


@settings(max_examples=25)
@given(commits(tokenizer=HeuristicCounter()))
def test_every_shipped_spec_runs_and_only_tightens(commit: ContextCommit) -> None:
    """Each shipped pipeline runs on random commits, keeps item identity and never grows an item."""
    facts = Facts(now=1e6, tokenizer=HeuristicCounter(), head_turn=60)
    for path in SPEC_FILES:
        after = load_spec(path).unwrap().run(commit, facts)
        assert [i.source_node_id for i in after.items] == [i.source_node_id for i in commit.items]
        for old, new in zip(commit.items, after.items, strict=True):
            assert old.state.may_become(new.state)
            assert new.tokens <= old.tokens


DEFAULT_TERSE = """
[batching]
every_turns = 32
scale_below = 16000
min_gain_of_rewrite = 0.72
[[rules]]
use = "cap_tool_result"
params = { max_chars = 2500, max_args_chars = 4000, hint_chars = 1600, scale_below = 16000, read_names_share = 0.9 }
[[rules]]
use = "age_tool_results"
params = { stub_head_chars = 0, stub_tail_chars = 0, stub_hint_chars = 60, used_tail_turns = 4, stub_hints_unseen = true, used_hint_chars = 2500, scale_below = 16000 }
[[rules]]
use = "gate_tool_results"
[[rules]]
name = "clear_idle"
use = "clear_idle"
params = { idle_seconds = 3600.0 }
"""


def test_default_spec_version_equals_a_terse_respelling() -> None:
    """Comments, explicit defaults, 3600 versus 3600.0, name and description do not change the version."""
    assert (
        load_spec(DEFAULT_TERSE).unwrap().version
        == load_spec(SPECS / "default.toml").unwrap().version
    )


def test_a_real_change_changes_the_version() -> None:
    """A different parameter value or rule order is a different pipeline."""
    base = load_spec(DEFAULT_TERSE).unwrap().version
    assert load_spec(DEFAULT_TERSE.replace("3600.0", "3601")).unwrap().version != base
    plain = "\n".join(
        line
        for line in DEFAULT_TERSE.split("\n")
        if "stub_" not in line and "hint_chars" not in line
    )
    base = load_spec(plain).unwrap().version
    swapped = (
        plain.replace('"cap_tool_result"', '"TMP"')
        .replace('"age_tool_results"', '"cap_tool_result"')
        .replace('"TMP"', '"age_tool_results"')
    )
    assert load_spec(swapped).unwrap().version != base


RESPELLINGS = [
    (
        '[[rules]]\nname = "r"\nwhen = { role = "tool", tokens = { gt = 10 } }\nthen = { state = "cleared" }\n',
        '[[rules]]\nname = "r"\nthen = { state = "cleared" }\nwhen = { tokens = { gt = 10 }, role = { eq = "tool" } }\n',
    ),
    (
        '[[rules]]\nname = "r"\nwhen = { tool_name = { in = ["grep", "cat"] } }\nthen = { state = "aged", text = "x" }\n',
        '[[rules]]\nname = "r"\nwhen = { tool_name = { in = ["cat", "grep", "cat"] } }\nthen = { text = "x", state = "aged" }\n',
    ),
    (
        '[[rules]]\nname = "r"\nwhen = { age_seconds = { gt = 60 } }\nthen = { state = "aged" }\n',
        '[[rules]]\nname = "r"\nwhen = { age_seconds = { gt = 60.0 } }\nthen = { state = "aged" }\n',
    ),
    (
        'version = 1\nname = "mine"\n[[rules]]\nuse = "clear_idle"\n[rules.params]\nidle_seconds = 60\n',
        '[[rules]]\nuse = "clear_idle"\nparams = { placeholder = "[Old tool result cleared]", idle_seconds = 60.0 }\n',
    ),
]


@pytest.mark.parametrize(("one", "other"), RESPELLINGS)
def test_equivalent_spellings_share_a_version(one: str, other: str) -> None:
    """Key order, bare eq, set order and duplicates, int or float, explicit defaults: one version."""
    assert load_spec(one).unwrap().version == load_spec(other).unwrap().version


def test_an_empty_spec_is_the_empty_pipeline() -> None:
    """A spec with no rules loads to a pipeline equal to `Pipeline()`, version included."""
    from ctxrules.rules import Pipeline  # noqa: PLC0415 - kept next to its one use

    assert load_spec("version = 1\n").unwrap() == Pipeline()
