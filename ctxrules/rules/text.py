"""Text cutting shared by the built-in rules and spec templates."""

from __future__ import annotations

import re
from collections.abc import Iterable

ELLIPSIS = "…"


#: A word that names nothing whatever is stripped from its ends: under four characters, a
#: plain or capitalised word (no inner capital), a number. One word a line (`plain_words`).
_PLAIN = re.compile(r"^(?:[A-Z]?[a-z]+|[0-9]+|[^\n]{1,3})$", re.MULTILINE)


def plain_words(words: Iterable[str]) -> list[str]:
    """The words (none holding a newline) that are never a distinctive name, found in one pass.

    Most words of any text are plain: setting them aside at once spares judging each in
    Python (the aging rule's hints, the fidelity extractor's references).

    >>> plain_words(["parse_config", "The", "lazy", "12345", "ab", "Fox", "HTTPServer"])
    ['The', 'lazy', '12345', 'ab', 'Fox']
    """
    return _PLAIN.findall("\n".join(words))


def byte_table(keep: str) -> bytes:
    """A `bytes.translate` table keeping the ASCII characters ``keep``, blanking every other byte."""
    return bytes(code if chr(code) in keep else ord(" ") for code in range(256))


def ascii_runs(text: str, table: bytes) -> list[str]:
    """The runs of the characters a `byte_table` keeps, in order: ``re.findall("[keep]+", text)``.

    Several times faster than the pattern: the table keeps a run's characters, which are
    ASCII, and blanks every other byte, those of UTF-8 sequences too.

    >>> ascii_runs("a.b, ünï c", byte_table("abc."))
    ['a.b', 'c']
    """
    return text.encode("utf-8", "surrogatepass").translate(table).decode("ascii").split()


def head(text: str, chars: int) -> str:
    """The first ``chars`` characters, with an ellipsis if anything was cut.

    >>> head("abcdef", 3), head("ab", 3)
    ('abc…', 'ab')
    """
    return text if len(text) <= chars else text[: max(chars, 0)] + ELLIPSIS


def tail(text: str, chars: int) -> str:
    """The last ``chars`` characters, with an ellipsis before them if anything was cut.

    >>> tail("abcdef", 2), tail("ab", 3)
    ('…ef', 'ab')
    """
    if len(text) <= chars:
        return text
    return ELLIPSIS + (text[-chars:] if chars > 0 else "")


def head_and_tail(text: str, head_chars: int, tail_chars: int, marker: str = ELLIPSIS) -> str:
    """The text with its middle replaced by ``marker`` when longer than head plus tail.

    >>> head_and_tail("abcdefghij", 3, 2)
    'abc…ij'
    >>> head_and_tail("abc", 3, 2)
    'abc'
    """
    if len(text) <= head_chars + tail_chars:
        return text
    end = text[len(text) - tail_chars :] if tail_chars > 0 else ""
    return text[:head_chars] + marker + end


def one_line(text: str) -> str:
    r"""The text with every run of whitespace (newlines included) collapsed to one space.

    >>> one_line("a\n  b\tc ")
    'a b c'
    """
    return " ".join(text.split())
