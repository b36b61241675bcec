"""Every bad setting of `Context` raises a `ContextError` saying what to pass; a cut request warns."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

import ctxrules
from ctxrules.engine.context import ConfigError, Context, ContextError, ContextWarning
from ctxrules.tokens import HeuristicCounter

BUILT_IN = "(built-in: cache-sensitive, default, small-window)"
NO_SPEC = "no such file, and no built-in spec of that name " + BUILT_IN
#: What a window that is not a whole number is told (not "too small").
WHOLE = "expected the model's context window in tokens, a whole number from 1,024 to 10,000,000"
WINDOW = "expected the model's context window in tokens, at least 1,024"
#: A tool schema of about 2,000 tokens; the recall tools of the default spec add about 100.
BIG_TOOL = {"type": "function", "function": {"name": "t", "description": "d" * 8_000}}

#: id, keyword arguments of Context (``{tmp}`` is a fresh folder), the class, the whole message.
CASES: list[tuple[str, dict[str, Any], type[ContextError], str]] = [
    (
        "window 0",
        {"window": 0},
        ConfigError,
        f"window=0: {WINDOW}; pass window=None for gpt-4o's 128,000",
    ),
    (
        "window negative",
        {"window": -5},
        ConfigError,
        f"window=-5: {WINDOW}; pass window=None for gpt-4o's 128,000",
    ),
    (
        "window in thousands",
        {"window": 100},
        ConfigError,
        f"window=100: {WINDOW} (did you mean 100_000?); pass window=None for gpt-4o's 128,000",
    ),
    (
        "window a str",
        {"window": "32k"},
        ConfigError,
        f"window='32k': {WHOLE}; pass window=None for gpt-4o's 128,000",
    ),
    (
        "window a float",
        {"window": 32_000.0},
        ConfigError,
        f"window=32000.0: {WHOLE}; pass window=None for gpt-4o's 128,000",
    ),
    (
        "window a bool",
        {"window": True},
        ConfigError,
        f"window=True: {WHOLE}; pass window=None for gpt-4o's 128,000",
    ),
    (
        "window 0 of an unknown model",
        {"model": "my-local-model", "window": 0},
        ConfigError,
        f"window=0: {WINDOW}; pass the model's window, e.g. window=32_000",
    ),
    (
        "window too small for the system prompt",
        {"window": 4_096, "system": "s" * 12_000},
        ConfigError,
        (
            "window=4,096 leaves 2,048 tokens for the input (2,048 are kept for the answer), and "
            "the system prompt (3,162) and tool schemas (0) alone take 3,162; pass a larger window, "
            "a shorter system= or fewer tools="
        ),
    ),
    (
        "window too small for the tools",
        {"window": 4_096, "tools": [BIG_TOOL]},
        ConfigError,
        (
            "window=4,096 leaves 2,048 tokens for the input (2,048 are kept for the answer), and "
            "the system prompt (0) and tool schemas (2,128) alone take 2,128; pass a larger window, "
            "a shorter system= or fewer tools="
        ),
    ),
    (
        "unknown model",
        {"model": "gpt4o"},
        ConfigError,
        "model='gpt4o' has no known context window; pass window=..., or did you mean 'gpt-4o'?",
    ),
    (
        "model empty",
        {"model": ""},
        ConfigError,
        "model='': expected the model's name, e.g. 'gpt-4o'",
    ),
    (
        "spec misspelt",
        {"spec": "defualt"},
        ConfigError,
        f"spec='defualt': {NO_SPEC}; did you mean 'default'?",
    ),
    (
        "spec misspelt with a dash",
        {"spec": "small_window"},
        ConfigError,
        f"spec='small_window': {NO_SPEC}; did you mean 'small-window'?",
    ),
    (
        "spec file missing",
        {"spec": "{tmp}/mine.toml"},
        ConfigError,
        f"spec='{{tmp}}/mine.toml': {NO_SPEC}",
    ),
    (
        "spec not a spec",
        {"spec": 42},
        ConfigError,
        "spec=42: expected a built-in spec name, a TOML path or text, or a Pipeline",
    ),
    (
        "store folder cannot be made",
        {"store": "/proc/nope/x.sqlite"},
        ConfigError,
        (
            "store='/proc/nope/x.sqlite': cannot create the folder '/proc/nope' (No such file or "
            "directory); pass a path in a folder you can write, or ':memory:'"
        ),
    ),
    (
        "store a folder",
        {"store": "{tmp}"},
        ConfigError,
        "store='{tmp}': a folder, not a file; pass a file in it, e.g. store='{tmp}/ctxrules.sqlite'",
    ),
    (
        "store not a database",
        {"store": "{tmp}/notes.txt"},
        ConfigError,
        (
            "cannot open store '{tmp}/notes.txt': file is not a database; pass a new file or an "
            "existing ctxrules store, or ':memory:'"
        ),
    ),
    (
        "store of an unknown scheme",
        {"store": "mysql://db/x"},
        ConfigError,
        "store='mysql://db/x': expected a file path, sqlite:///PATH or postgresql://USER@HOST/DB",
    ),
    (
        "session empty",
        {"session": ""},
        ConfigError,
        "session='': expected a non-empty str naming the session, e.g. session='main'",
    ),
    (
        "system not a str",
        {"system": ["be brief"]},
        ConfigError,
        "system=['be brief']: expected the system prompt as a str",
    ),
    (
        "tools not schemas",
        {"tools": ["read_file"]},
        ConfigError,
        "tools=['read_file']: expected a list of tool schemas (dicts), as the SDK takes them",
    ),
    (
        "clock not callable",
        {"clock": 0.0},
        ConfigError,
        "clock=0.0: expected a function returning the time in seconds",
    ),
    (
        "summarizer not callable",
        {"summarizer": "gpt-4o-mini"},
        ConfigError,
        (
            "summarizer='gpt-4o-mini': expected None or a function from messages to summary text "
            "(or an awaitable of it)"
        ),
    ),
    (
        "recall not options",
        {"recall": True},
        ConfigError,
        "recall=True: expected None or a RecallOptions",
    ),
    (
        "allow_imports not a bool",
        {"allow_imports": "yes"},
        ConfigError,
        "allow_imports='yes': expected True or False",
    ),
]


def _fill(value: object, tmp: Path) -> object:
    return value.replace("{tmp}", str(tmp)) if isinstance(value, str) else value


@pytest.mark.parametrize(
    ("kwargs", "error", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_every_bad_setting_raises_a_context_error_saying_what_to_pass(
    kwargs: dict[str, Any], error: type[ContextError], message: str, tmp_path: Path
) -> None:
    """Each bad setting is a ContextError subclass whose whole message names the fix."""
    (tmp_path / "notes.txt").write_text("not a database\n", encoding="utf-8")
    given = {"model": "gpt-4o", "tokenizer": HeuristicCounter(), **kwargs}
    spec = given.pop("spec", "default")
    with pytest.raises(ContextError) as raised:
        Context(_fill(spec, tmp_path), **{k: _fill(v, tmp_path) for k, v in given.items()})  # type: ignore[arg-type]
    assert type(raised.value) is error
    assert str(raised.value) == _fill(message, tmp_path)
    assert "Traceback" not in str(raised.value)


def test_the_smallest_window_and_a_thousands_window_work() -> None:
    """1,024 tokens is accepted, and the table's window is used when none is given."""
    assert Context(model="gpt-4o", window=1_024).window == 1_024
    assert Context(model="gpt-4o").window == 128_000


def test_a_message_larger_than_the_window_is_cut_with_a_visible_warning() -> None:
    """A 5,400-character message at a 2,048 window warns (ContextWarning) and the turn says so."""
    ctx = Context(model="gpt-4o", window=2_048, tokenizer=HeuristicCounter())
    ctx.add({"role": "user", "content": "hello world. " * 415})
    with pytest.warns(ContextWarning, match="the request was cut to fit the 1,024 tokens") as seen:
        request = ctx.openai()
    assert seen[0].filename == __file__  # points at the caller, not inside ctxrules
    assert ctx.last is not None
    assert ctx.last.warnings == (
        (
            "the request was cut to fit the 1,024 tokens the input may use (1 text shortened at "
            "…[snipped]…); pass a larger window or send less"
        ),
    )
    assert "…[snipped]…" in str(request["messages"])
    assert ctxrules.ContextWarning is ContextWarning


def test_a_request_that_fits_warns_of_nothing() -> None:
    """The same message at the model's own window is sent whole, with no warning."""
    ctx = Context(model="gpt-4o", tokenizer=HeuristicCounter())
    ctx.add({"role": "user", "content": "hello world. " * 415})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        request = ctx.openai()
    assert request["messages"] == [{"role": "user", "content": "hello world. " * 415}]
    assert ctx.last is not None
    assert ctx.last.warnings == ()
