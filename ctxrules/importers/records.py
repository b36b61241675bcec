"""Reading raw records: JSON Lines, JSON values, timestamps and message text."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import attrs

from ctxrules.dag.json_values import JsonRefused, read_json


@attrs.frozen
class Unreadable:
    """Why a raw value could not be read, returned in place of it; ``line`` within the text."""

    reason: str
    line: int | None = None


def parse_json(raw: str) -> object:
    r"""The JSON value in ``raw``, or `Unreadable` saying why not.

    Values no layer can keep (NaN, ``1e999``, integers past 64 bits, deep nesting) are
    refused here, with their line; lone surrogates are replaced (see `read_json`).

    >>> parse_json('{"a": 1}'), parse_json('{"a":\n')
    ({'a': 1}, Unreadable(reason='invalid JSON at column 1: Expecting value', line=2))
    >>> parse_json('{"a": 1,\n "b": NaN}')
    Unreadable(reason='invalid JSON: NaN is not a JSON value', line=2)
    """
    try:
        return read_json(raw)
    except json.JSONDecodeError as err:
        return Unreadable(f"invalid JSON at column {err.colno}: {err.msg}", err.lineno)
    except JsonRefused as err:
        return Unreadable(f"invalid JSON: {err.reason}", err.line)
    except ValueError as err:  # e.g. an integer literal past Python's digit limit
        return Unreadable(f"invalid JSON: {err}")


def lines(text: str) -> Iterator[str]:
    r"""The lines of ``text`` split on "\n" only, one at a time (as ``text.split("\n")``).

    str.splitlines also breaks on U+2028 and friends, which JSON strings written with
    ensure_ascii=False may contain. One at a time: a list of every line of a 160 MB log
    held a second copy of it while it was read.

    >>> list(lines("a\nb\n")), list(lines("")), list(lines("x"))
    (['a', 'b', ''], [''], ['x'])
    """
    start, end = 0, len(text)
    while start <= end:
        stop = text.find("\n", start)
        if stop < 0:
            stop = end
        yield text[start:stop]
        start = stop + 1


def json_lines(text: str) -> Iterator[tuple[int, object]]:
    """Each non-blank line's number and value (or `Unreadable`)."""
    for number, raw in enumerate(lines(text), start=1):
        if raw.strip():
            value = parse_json(raw)
            # The line of the file, not the line within the one-line text that was parsed.
            yield (
                number,
                attrs.evolve(value, line=number) if isinstance(value, Unreadable) else value,
            )


def guarded(read: Callable[[object], str | None], record: object) -> str | None:
    """``read(record)``, with any fault it raises turned into the record's problem.

    One record must never fail a whole import: the caller rejects it with its line, and
    ``skip_bad`` goes on past it.

    >>> guarded(lambda r: None, {}), guarded(lambda r: 1 / 0, {})
    (None, 'cannot read this record: ZeroDivisionError: division by zero')
    """
    try:
        return read(record)
    except Exception as error:  # noqa: BLE001 - a reader's bug becomes this record's problem
        return f"cannot read this record: {type(error).__name__}: {error}"


def found(value: object) -> str:
    """A short description of a value for an error message.

    >>> found([1]), found({}), found(None), found("x" * 50)
    ('a list', 'an object', 'null', "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…'")
    """
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, str) and len(value) > 30:
        return repr(value[:30] + "…")
    return repr(value) if not isinstance(value, bool) else str(value).lower()


def epoch(value: object) -> float:
    """Seconds since the epoch from an ISO 8601 string or a number; 0.0 when absent or unreadable.

    >>> epoch("2026-02-14T21:28:40.5Z"), epoch(1.5), epoch("soon"), epoch(None)
    (1771104520.5, 1.5, 0.0, 0.0)
    """
    if isinstance(value, bool):
        return 0.0
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an integer past a float's range
            return 0.0
        return number if math.isfinite(number) else 0.0
    if not isinstance(value, str):
        return 0.0
    try:
        moment = datetime.fromisoformat(value)
        aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
        return aware.timestamp()
    except (ValueError, OverflowError):
        return 0.0


def text_of(content: object, field: str = "content") -> str | Unreadable:
    r"""Message content as text: a string as is, a list of parts flattened, text parts joined.

    A part without text (an image, a file) becomes ``[type]``.

    >>> text_of([{"type": "text", "text": "a"}, {"type": "image_url"}, "b"])
    'a\n[image_url]\nb'
    >>> text_of(7)
    Unreadable(reason='content: expected a string or a list of parts, found 7', line=None)
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return Unreadable(f"{field}: expected a string or a list of parts, found {found(content)}")
    texts: list[str] = []
    for index, part in enumerate(content):
        text = part_text(part)
        if text is None:
            return Unreadable(
                f"{field}[{index}]: expected a string or an object with a 'type', "
                f"found {found(part)}"
            )
        texts.append(text)
    return "\n".join(texts)


def part_text(part: object) -> str | None:
    """One content part as text: its ``text``, or ``[type]`` for a part without text; None if neither.

    >>> part_text({"type": "text", "text": "hi"}), part_text({"type": "image"}), part_text(3)
    ('hi', '[image]', None)
    >>> part_text({"type": "refusal", "refusal": "I can't help with that."})
    "I can't help with that."
    """
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return None
    text, kind = part.get("text"), part.get("type")
    if isinstance(text, str):
        return text
    # An OpenAI refusal part says, in its own field, what the model answered.
    if kind == "refusal" and isinstance(refusal := part.get("refusal"), str):
        return refusal
    return f"[{kind}]" if isinstance(kind, str) else None
