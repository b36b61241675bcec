"""Fuzzing `load_spec`: random text and random near-valid documents never make it raise."""

from __future__ import annotations

import math
import tomllib

from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Result, Success

from ctxrules.rules.pipeline import Pipeline
from ctxrules.spec import FEATURES, OPERATORS, SpecErrors, load_spec


def toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def toml_value(value: object) -> str:
    """One TOML value, on one line: inline tables and arrays nest."""
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
        )
    return toml_scalar(value)


def toml_scalar(value: object) -> str:
    """A TOML boolean, integer, float (nan and inf included) or string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, int):
        return str(value)
    assert isinstance(value, str)
    return toml_string(value)


def toml_document(table: dict[str, object]) -> str:
    """A whole document: one ``key = value`` line per top-level key."""
    return "".join(f"{toml_string(k)} = {toml_value(v)}\n" for k, v in table.items())


def near(valid: list[str]) -> st.SearchStrategy[str]:
    """Valid names three times in four; otherwise a typo of one, or arbitrary text."""
    names = st.sampled_from(valid)
    typos = names.map(lambda n: n[:-1]) | names.map(lambda n: n + "s") | names.map(str.upper)
    return st.one_of(names, names, names, names, names, names, typos, st.text(max_size=8))


def mostly(
    valid: st.SearchStrategy[object], wild: st.SearchStrategy[object]
) -> st.SearchStrategy[object]:
    """``valid`` three times in four, ``wild`` otherwise."""
    return st.one_of(valid, valid, valid, wild)


WILD = st.recursive(
    st.integers(-(2**63), 2**63 - 1) | st.floats() | st.booleans() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
NAMES = ["grep", "read_file", "todo_list", "web_search", "tool", "user", "assistant", "system"]
OPERANDS = {
    "str": st.sampled_from(
        [*NAMES, "full", "aged", "cleared", "summary", "summarized", "tol", "^g.*", "("]
    ),
    "int": st.integers(-5, 5000),
    "float": st.floats(-10, 1e5) | st.integers(0, 10_000) | st.just(math.nan),
    "bool": st.booleans(),
}
TEMPLATES = st.lists(
    st.sampled_from(
        ["[", "{name}", " was ", "{tokens}", "{head:10}", "{tail:5}", "{args:3}", "{{", "}}", "x"]
    )
    | st.sampled_from(["{x.y}", "{a[0]}", "{name!r}", "{", "}", "{head}", "{tokens:5}", "{}"]),
    max_size=6,
).map("".join)


@st.composite
def operand_tables(draw: st.DrawFn, feature: str) -> object:
    """A bare operand or a table of operators for one feature, mostly well-typed."""
    known = FEATURES.get(feature)
    valid = OPERANDS["str"] if known is None else OPERANDS[known.kind]
    if known is not None and known.choices:
        valid = st.sampled_from(known.choices)
    operand = mostly(valid, WILD)
    if draw(st.booleans()):
        return draw(operand)
    ops = draw(st.lists(near(list(OPERATORS)), min_size=1, max_size=3, unique=True))
    return {
        op: draw(st.lists(operand, max_size=3) if op in ("in", "not_in") else operand) for op in ops
    }


@st.composite
def declarative_entries(draw: st.DrawFn) -> dict[str, object]:
    """A ``when``/``then`` entry close to valid."""
    features = draw(st.lists(near(sorted(FEATURES)), max_size=3, unique=True))
    then: dict[str, object] = {
        "state": draw(
            mostly(st.sampled_from(["aged", "cleared"]), near(["summarized", "full", "clear"]))
        )
    }
    if draw(st.booleans()):
        then["text"] = draw(mostly(TEMPLATES, WILD))
    entry: dict[str, object] = {
        "name": draw(st.text(min_size=1, max_size=8)),
        "when": {f: draw(operand_tables(f)) for f in features},
        "then": then,
    }
    return draw(mutated(entry))


@st.composite
def builtin_entries(draw: st.DrawFn) -> dict[str, object]:
    """A ``use`` entry naming a built-in, with parameters close to valid."""
    use = draw(near(["cap_tool_result", "age_tool_results", "gate_tool_results", "clear_idle"]))
    keys = [
        "tail_turns",
        "max_chars",
        "tail_share",
        "idle_seconds",
        "placeholder",
        "protected_tools",
        "min_turns",
        "min_tokens",
    ]
    values = (
        st.integers(-5, 10_000)
        | st.floats(-1, 2)
        | st.text(max_size=8)
        | st.lists(st.sampled_from(NAMES), max_size=3)
    )
    params = draw(st.dictionaries(near(keys), mostly(values, WILD), max_size=3))
    entry: dict[str, object] = {"use": use, "params": params}
    if draw(st.booleans()):
        entry["name"] = draw(st.text(min_size=1, max_size=8))
    return draw(mutated(entry))


@st.composite
def mutated(draw: st.DrawFn, entry: dict[str, object]) -> dict[str, object]:
    """The entry, or with one key dropped, replaced by a wild value, or an extra key added."""
    choice = draw(st.integers(0, 5))
    entry = dict(entry)
    if choice == 1 and entry:
        del entry[draw(st.sampled_from(sorted(entry)))]
    elif choice == 2 and entry:
        entry[draw(st.sampled_from(sorted(entry)))] = draw(WILD)
    elif choice == 3:
        entry[draw(near(["use", "when", "then", "params", "name"]))] = draw(WILD)
    return entry


ENTRIES = st.one_of(
    builtin_entries(), declarative_entries(), st.dictionaries(st.text(max_size=6), WILD, max_size=3)
)
DOCUMENTS = st.fixed_dictionaries(
    {},
    optional={
        "version": mostly(st.just(1), st.sampled_from([2, "1", 1.0]) | WILD),
        "name": mostly(st.text(max_size=10), WILD),
        "description": st.text(max_size=20),
        "rules": mostly(st.lists(mostly(ENTRIES, WILD), max_size=5), WILD),
        "rulez": WILD,
    },
)


def assert_clean(result: Result[Pipeline, SpecErrors]) -> None:
    """Success with a pipeline, or Failure with errors that are all spec faults, never internal."""
    assert isinstance(result, Success | Failure)
    if isinstance(result, Failure):
        errors = result.failure().errors
        assert errors
        assert all(error.fault != "internal" for error in errors), result.failure()
    else:
        assert isinstance(result.unwrap(), Pipeline)


@given(st.text())
def test_random_text_never_raises(text: str) -> None:
    """Any text at all (read as TOML, thanks to the newline) loads or fails with spec errors."""
    assert_clean(load_spec("\n" + text))


@given(DOCUMENTS)
def test_near_valid_documents_never_raise(document: dict[str, object]) -> None:
    """Random documents close to the grammar load or fail with spec errors, never an exception."""
    text = toml_document(document)
    assert_clean(load_spec(text))


@given(st.lists(ENTRIES, min_size=1, max_size=4))
def test_random_rule_tables_never_raise(entries: list[dict[str, object]]) -> None:
    """Rule entries written as [[rules]] arrays of tables load or fail cleanly."""
    text = "".join("[[rules]]\n" + toml_document(entry) for entry in entries)
    assert_clean(load_spec(text))


@given(DOCUMENTS)
def test_the_serialiser_writes_valid_toml(document: dict[str, object]) -> None:
    """The test's own serialiser round-trips, so the fuzzing above reaches the spec checks."""
    parsed = tomllib.loads(toml_document(document))
    assert toml_document(parsed) == toml_document(document)
