"""Every rule example in docs/ passes `ctxrules check`: users copy them (invariant 16 above all).

Every ``[[rules]]`` entry of a TOML block or of a doctest's spec string that loads is
checked, in one spec (one search per rule, one set of child processes), as a user would
paste it into a spec: beside the default spec's ``[batching]`` table (without one, any rule
that rewrites items already sent breaks invariant 15, as docs/specs.md says). Examples
that do not load are the docs' error examples.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from returns.result import Failure

from ctxrules.checker.spec_check import check_pipeline
from ctxrules.spec import load_spec

DOCS = Path(__file__).resolve().parents[2] / "docs"
BATCHING = "[batching]\nevery_turns = 16\nmin_history_tokens = 8000\n\n"
_FENCE = re.compile(r"```(toml|python)\n(.*?)```", re.DOTALL)
_PROMPT = re.compile(r"^(?:>>> |\.\.\. ?)", re.MULTILINE)


def _source(block: str) -> str:
    """A doctest block's code, prompts removed (output lines dropped)."""
    lines = [line for line in block.splitlines() if line.startswith((">>>", "..."))]
    return _PROMPT.sub("", "\n".join(lines))


def rule_examples() -> Iterator[tuple[str, str]]:
    """(where, spec text) for each rule example of the docs."""
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for number, (kind, block) in enumerate(_FENCE.findall(text)):
            specs = (
                [block] if kind == "toml" else re.findall(r"'''(.*?)'''", _source(block), re.DOTALL)
            )
            for k, spec in enumerate(specs):
                if "[[rules]]" in spec:
                    yield f"{page.name}#{number}.{k}", spec


@pytest.fixture
def my_rules(tmp_path: Path) -> Iterator[None]:
    """``my_rules`` as docs/python-rules.md defines it (its first code block), as a module file.

    A file, not only an entry in ``sys.modules``: the check reruns rules in child processes.
    """
    text = (DOCS / "python-rules.md").read_text(encoding="utf-8")
    block = next(
        b for kind, b in _FENCE.findall(text) if kind == "python" and "def clear_tool_results" in b
    )
    folder = tmp_path / "modules"
    folder.mkdir()
    (folder / "my_rules.py").write_text(_source(block), encoding="utf-8")
    sys.path.insert(0, str(folder))
    yield
    sys.path.remove(str(folder))
    sys.modules.pop("my_rules", None)


def _toml(value: object) -> str:
    """A TOML value as the docs' rule entries use them: text, numbers, booleans, arrays, tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    assert isinstance(value, dict), value
    return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"


def combined_spec(examples: list[tuple[str, dict[str, Any]]]) -> str:
    """One spec holding every example's rules, each named after its example, with batching."""
    lines = [BATCHING]
    for where, entry in examples:
        renamed = {**entry, "name": f"{where}:{entry.get('name', entry.get('use'))}"}
        lines.append("[[rules]]")
        lines += [f"{key} = {_toml(value)}" for key, value in renamed.items()]
        lines.append("")
    return "\n".join(lines)


@pytest.mark.usefixtures("my_rules")
def test_every_rule_example_of_the_docs_passes_the_check(tmp_path: Path) -> None:
    """Invariants 2-16 on every rule of each example that loads: no counterexample.

    Each example is loaded on its own (the error examples do not load and are left out);
    their rules are then checked together, each on its own and as one batched pipeline.
    """
    entries: list[tuple[str, dict[str, Any]]] = []
    for where, example in rule_examples():
        if isinstance(load_spec(example, allow_imports=True), Failure):
            continue
        rules = tomllib.loads(example)["rules"]
        entries += [(f"{where}.{k}", entry) for k, entry in enumerate(rules)]
    spec = tmp_path / "docs-rules.toml"
    spec.write_text(combined_spec(entries), encoding="utf-8")
    pipeline = load_spec(spec, allow_imports=True).unwrap()
    report = check_pipeline(spec, pipeline, examples=40, seed=1, allow_imports=True)
    found = report.counterexample
    assert found is None, (found.rule, [v.message for v in found.violations], found.error)
    names = [named.name for named in pipeline.rules]
    # The first example of each rule page, the python rule's spec, the specs page's entries.
    assert len(names) >= 10, names
    assert any(n.startswith("python-rules.md") for n in names)
    assert any(n.startswith("declarative-rules.md#0") for n in names)
