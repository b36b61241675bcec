"""Strategies that break session files the way files break, and specs the way authors do.

Seeds are real: the bundled session (a slice of it, to keep each input small) and small
synthetic logs of each line format. Mutations act on lines (truncate, drop, duplicate,
swap), on JSON values (flip a type, nest deeply, a huge number, NaN, a lone surrogate,
a NUL) and on bytes (a BOM, CRLF line ends).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import ctxrules

BUNDLED = Path(ctxrules.__file__).parent / "data" / "sessions"
SPECS = Path(__file__).resolve().parents[2] / "specs"

#: Inputs per fuzz target: a few in the edit-test loop, >= 2,000 in CI (HYPOTHESIS_PROFILE=ci).
_DEFAULT = "2000" if os.environ.get("HYPOTHESIS_PROFILE") == "ci" else "25"
EXAMPLES = int(os.environ.get("CTXRULES_FUZZ_EXAMPLES", _DEFAULT))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: Inputs per target of the live surfaces (Context, recall, show, the stores), each input a
#: whole session's calls: 200 in CI to keep its minutes; CTXRULES_FUZZ_EXAMPLES=2000 runs
#: the campaign's count (the figures in issue 33's note were measured so).
_SURFACES = "200" if os.environ.get("HYPOTHESIS_PROFILE") == "ci" else "25"
SURFACE_EXAMPLES = int(os.environ.get("CTXRULES_FUZZ_EXAMPLES", _SURFACES))
FUZZ_SURFACES = settings(FUZZ, max_examples=SURFACE_EXAMPLES)


def _seed_lines() -> list[list[str]]:
    """Slices of 6 lines of the bundled sessions, and small synthetic logs of each format."""
    seeds = []
    for path in sorted(BUNDLED.glob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        seeds += [lines[start : start + 6] for start in range(0, min(len(lines), 120), 6)]
    user = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s"}
    seeds.append(
        [
            json.dumps({**user, "message": {"content": "list files"}}),
            json.dumps(
                {
                    "type": "assistant",
                    "uuid": "a1",
                    "parentUuid": "u1",
                    "sessionId": "s",
                    "message": {
                        "id": "m1",
                        "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
                    },
                }
            ),
            json.dumps(
                {
                    "type": "user",
                    "uuid": "u2",
                    "parentUuid": "a1",
                    "sessionId": "s",
                    "message": {
                        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}]
                    },
                }
            ),
        ]
    )
    seeds.append(
        [
            json.dumps({"id": "u1", "role": "user", "seq": 0, "output": "hi", "created_at": 1.0}),
            json.dumps(
                {"id": "a1", "role": "assistant", "seq": 1, "predecessor": "u1", "output": "ok"}
            ),
        ]
    )
    return seeds


SEEDS = _seed_lines()

#: Values that are valid JSON (or nearly) and broke a layer downstream once.
POISON = [
    "[" * 900 + "]" * 900,
    "9" * 400,
    "1e999",
    "-1e999",
    "NaN",
    "Infinity",
    '"\\ud800"',
    '"x\\u0000y"',
    '"\\udfff\\ud800"',
    "null",
    "[]",
    "{}",
    '""',
    "true",
    "-0",
    str(2**64),
]


def _flip(value: Any, poison: str, path: list[int]) -> Any:
    """``value`` with the leaf or member that ``path`` picks replaced by ``poison``'s value."""
    if isinstance(value, dict) and value:
        keys = sorted(value)
        key = keys[path[0] % len(keys)]
        inner = _flip(value[key], poison, path[1:]) if path[1:] else _Raw(poison)
        return {**value, key: inner}
    if isinstance(value, list) and value:
        index = path[0] % len(value)
        inner = _flip(value[index], poison, path[1:]) if path[1:] else _Raw(poison)
        return [*value[:index], inner, *value[index + 1 :]]
    return _Raw(poison)


class _Raw:
    """A JSON fragment written as is (so NaN, huge numbers and deep nesting survive dumping)."""

    def __init__(self, text: str) -> None:
        self.text = text


def _dump(value: Any) -> str:
    if isinstance(value, _Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dump(v) for v in value) + "]"
    return json.dumps(value)


@st.composite
def _poisoned_line(draw: st.DrawFn, line: str) -> str:
    path = draw(st.lists(st.integers(0, 50), min_size=1, max_size=4))
    poison = draw(st.sampled_from(POISON))
    try:
        return _dump(_flip(json.loads(line), poison, path))
    except (ValueError, RecursionError):  # not JSON, or poisoned deep already: leave it
        return line


@st.composite
def session_files(draw: st.DrawFn) -> bytes:
    """A seed log with a few line-, value- and byte-level mutations, as the bytes of a file."""
    lines = list(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(0, 3))):
        if not lines:
            break
        where = draw(st.integers(0, len(lines) - 1))
        kind = draw(
            st.sampled_from(["poison", "poison", "truncate", "drop", "duplicate", "swap", "junk"])
        )
        if kind == "poison":
            lines[where] = draw(_poisoned_line(lines[where]))
        elif kind == "truncate":
            lines[where] = lines[where][: draw(st.integers(0, len(lines[where])))]
        elif kind == "drop":
            del lines[where]
        elif kind == "duplicate":
            lines.insert(where, lines[where])
        elif kind == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[where], lines[other] = lines[other], lines[where]
        else:
            lines[where] = draw(st.text(max_size=20))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    data = ending.join(lines).encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    return data


def texts_of(data: bytes) -> str:
    """The file as the importers read it (UTF-8, a BOM skipped); undecodable bytes replaced."""
    return data.decode("utf-8-sig", "replace")


_SPEC_SEEDS = [path.read_text(encoding="utf-8") for path in sorted(SPECS.glob("*.toml"))]
_SPEC_PIECES = [
    '[[rules]]\nuse = "cap_tool_result"\n',
    '[[rules]]\nuse = "age_tool_results"\nparams = { tail_turns = 9999999999999999999999 }\n',
    '[[rules]]\nname = "r"\nwhen = { tool_name = { matches = "^(a+)+$" } }\nthen = { state = "cleared" }\n',
    '[[rules]]\nname = "r"\nwhen = { tokens = { gt = 1e999 } }\nthen = { state = "aged" }\n',
    '[[rules]]\nname = "r"\nwhen = { role = "tool" }\nthen = { state = "cleared", text = "{name} {__class__}" }\n',
    '[[rules]]\nuse = "pkg.mod:factory"\n',
    "x = " + "[" * 200 + "]" * 200 + "\n",
    "x = " + "9" * 5_000 + "\n",
    "\ufeffversion = 1\n",
    "version = 2\n",
    "rules = 3\n",
]


@st.composite
def spec_texts(draw: st.DrawFn) -> str:
    """A real spec or a hostile piece, spliced, cut short, or with a byte changed."""
    parts = draw(st.lists(st.sampled_from(_SPEC_SEEDS + _SPEC_PIECES), min_size=1, max_size=3))
    text = "".join(parts)
    kind = draw(st.sampled_from(["as_is", "cut", "insert"]))
    if kind == "cut":
        text = text[: draw(st.integers(0, len(text)))]
    elif kind == "insert":
        where = draw(st.integers(0, len(text)))
        text = text[:where] + draw(st.text(max_size=8)) + text[where:]
    return text
