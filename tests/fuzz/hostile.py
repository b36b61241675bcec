"""Strategies for the surfaces a model or a host drives: SDK responses, messages, recall calls, ids.

Values are Python objects, not files: a response's member is replaced by a poison a
provider, an SDK or an injected tool result could hand over (a huge or negative count, a
lone surrogate, a set, NaN, a deep list, an object whose ``model_dump`` raises, an escape
sequence for the terminal).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ctxrules.testing.responses import anthropic_response, openai_response


class RaisingSdkObject:
    """An SDK object whose ``model_dump`` raises."""

    def model_dump(self, **_: object) -> dict[str, object]:
        """Raise, as a broken SDK object would."""
        raise RuntimeError("model_dump failed")


class SdkObject:
    """An SDK object whose ``model_dump`` gives ``data``."""

    def __init__(self, data: object) -> None:
        self.data = data

    def model_dump(self, **_: object) -> object:
        """The wrapped value."""
        return self.data


#: Text a model or a tool result can carry: escapes, controls, surrogates, huge runs.
HOSTILE_TEXT = (
    "",
    "\x00",
    "\udc80",
    "a\ud800b",
    "\x1b]0;owned\x07",
    "\x1b]52;c;aGVsbG8=\x07",
    "\x1b[2J",
    "\u202egnp.exe",
    "word " * 300,
    "x" * 20_000,
    "(" * 500,
    '"' * 50,
    "h:" + "z" * 3_000,
)
POISONS: tuple[Any, ...] = (
    None,
    -1,
    10**400,
    2**63,
    float("nan"),
    float("inf"),
    True,
    {1, 2},
    object(),
    RaisingSdkObject(),
    [[[[[[[[[[[]]]]]]]]]]],
    {1: "key"},
    *HOSTILE_TEXT,
)


def hostile_texts() -> st.SearchStrategy[str]:
    """A hostile text, or any short text (surrogates included)."""
    return st.one_of(st.sampled_from(HOSTILE_TEXT), st.text(max_size=40))


def _poisoned(value: Any, path: list[int], poison: Any) -> Any:
    if not path:
        return poison
    if isinstance(value, dict) and value:
        key = sorted(value, key=str)[path[0] % len(value)]
        return {**value, key: _poisoned(value[key], path[1:], poison)}
    if isinstance(value, list) and value:
        index = path[0] % len(value)
        return [*value[:index], _poisoned(value[index], path[1:], poison), *value[index + 1 :]]
    return poison


@st.composite
def hostile_responses(draw: st.DrawFn) -> object:
    """An OpenAI or Anthropic response (dict or SDK object) with one member poisoned, or none."""
    calls = draw(
        st.lists(
            st.tuples(st.sampled_from(["c1", "c2", "c1 ", ""]), hostile_texts(), st.just({})),
            max_size=3,
        )
    )
    text = draw(hostile_texts())
    usage = (draw(st.integers(0, 10**6)), draw(st.integers(0, 10**6)))
    if draw(st.booleans()):
        response: Any = openai_response(1, text, calls, usage)
    else:
        response = anthropic_response(1, text, calls, usage)
    if draw(st.booleans()):
        path = draw(st.lists(st.integers(0, 10), min_size=1, max_size=5))
        response = _poisoned(response, path, draw(st.sampled_from(POISONS)))
    return SdkObject(response) if draw(st.integers(0, 4)) == 0 else response


@st.composite
def hostile_messages(draw: st.DrawFn) -> object:
    """A message a host adds: a plain one of any role with hostile content, or a poisoned one."""
    role = draw(st.sampled_from(["user", "assistant", "system", "tool", "developer", "robot", 7]))
    message: Any = {"role": role, "content": draw(hostile_texts())}
    if role == "tool":
        message["tool_call_id"] = draw(st.sampled_from(["c1", "c2", "missing"]))
    if draw(st.booleans()):
        path = draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
        message = _poisoned(message, path, draw(st.sampled_from(POISONS)))
    return message


@st.composite
def hostile_recall_calls(draw: st.DrawFn) -> tuple[str, dict[str, object]]:
    """A ``recall`` or ``search_history`` call with arguments a hostile model could send."""
    name = draw(st.sampled_from(["recall", "search_history", "recall ", "x" * 500]))
    keys = st.sampled_from(["handle", "page", "query", "limit", "other"])
    values = st.one_of(st.sampled_from(POISONS[:9]), hostile_texts(), st.integers(-5, 10**6))
    return name, draw(st.dictionaries(keys, values, max_size=3))
