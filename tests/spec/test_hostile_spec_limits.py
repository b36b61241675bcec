"""Specs built to exhaust the loader (issue 33 item 8): each refused at once, with a location.

A 100,000-part dotted key (200 kB) took 18 s and 3.8 GB before a `MemoryError` reported
without a path (tomllib keeps every prefix of the key); a template width of 5,000 digits and
a source that is neither text nor a path were internal faults without a path.
"""

from __future__ import annotations

import tracemalloc

import pytest

from ctxrules.spec import load_spec


def _only_error(result: object) -> object:
    errors = result.failure().errors  # type: ignore[attr-defined]
    assert len(errors) == 1, errors
    return errors[0]


@pytest.mark.parametrize("key", ["a" + ".a" * 100_000 + " = 1\n", "[" + "t." * 5_000 + "t]\n"])
def test_a_deep_dotted_key_is_refused_before_parsing(key: str) -> None:
    """Refused at its line, in a few MB (the parse alone took 3.8 GB)."""
    tracemalloc.start()
    result = load_spec("version = 1\n" + key)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    error = _only_error(result)
    assert error.path == "line 2"  # type: ignore[attr-defined]
    assert error.fault != "internal"  # type: ignore[attr-defined]
    assert peak < 50_000_000


def test_a_template_width_of_thousands_of_digits_is_a_spec_error() -> None:
    """``{head:99…9}`` is refused at its key path, its digits not echoed whole."""
    spec = (
        '[[rules]]\nname = "x"\nwhen = { role = "tool" }\n'
        'then = { state = "cleared", text = "{head:' + "9" * 5_000 + '}" }\n'
    )
    error = _only_error(load_spec(spec))
    assert error.path == "rules[0].then.text"  # type: ignore[attr-defined]
    assert error.fault != "internal"  # type: ignore[attr-defined]
    assert len(str(error)) < 400


@pytest.mark.parametrize("source", [b"version = 1\n", 7, None, ["version = 1"], object()])
def test_a_source_that_is_neither_text_nor_a_path_is_named(source: object) -> None:
    """Bytes, a number, None, a list, an object: an error at ``source``, not an internal fault."""
    error = _only_error(load_spec(source))  # type: ignore[arg-type]
    assert error.path == "source"  # type: ignore[attr-defined]
    assert error.fault != "internal"  # type: ignore[attr-defined]


def test_a_long_dotted_value_is_not_a_deep_key() -> None:
    """Dots in a value or a comment are not key parts: such a spec still loads."""
    dots = "." * 500
    text = (
        f"# {dots}\n[[rules]]\nname = 'x'\nwhen = {{ role = 'tool' }}\n"
        f"then = {{ state = 'cleared', text = '[{dots}]' }}\n"
    )
    assert load_spec(text).unwrap().rules
