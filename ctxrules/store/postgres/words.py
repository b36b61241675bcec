"""The text search sees, split into words the way SQLite's FTS5 splits it.

PostgreSQL's own parser reads ``json.loads`` as a host name and ``src/a.py`` as a path;
splitting into runs of letters and digits here, for the index and the query alike, makes
both backends find the same nodes for the same words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ctxrules.canonical import canonical_json

#: A word: a run of letters and digits (underscore and punctuation separate, as in FTS5).
WORD = re.compile(r"[^\W_]+")


def body_text(record: Mapping[str, object]) -> str:
    """Name, input and output of a node record joined by spaces; JSON other than strings as JSON.

    >>> body_text({"name": "grep", "input": {"pattern": "x"}, "output": None})
    'grep {"pattern":"x"}'
    """
    parts = []
    for field in ("name", "input", "output"):
        value = record.get(field)
        if value is None or value == "":
            continue
        parts.append(value if isinstance(value, str) else canonical_json(value))
    return " ".join(parts)


def split_words(text: str) -> list[str]:
    """The lower-cased words of ``text``.

    >>> split_words("Use json.loads: src/a_b.py")
    ['use', 'json', 'loads', 'src', 'a', 'b', 'py']
    """
    return [match.group().casefold() for match in WORD.finditer(text)]


def words(text: str) -> str:
    """The words of ``text`` joined by one space: what the ``tsvector`` is built from."""
    return " ".join(split_words(text))


def snippet(text: str, terms: frozenset[str], prefixes: frozenset[str], width: int = 16) -> str:
    """``text`` with each matching word in brackets, cut to ``width`` words around the first.

    >>> snippet("Use tomllib, not toml.", frozenset({"toml"}), frozenset())
    'Use tomllib, not [toml].'
    """
    found = list(WORD.finditer(text))

    def hit(word: str) -> bool:
        folded = word.casefold()
        return folded in terms or any(folded.startswith(p) for p in prefixes)

    first = next((i for i, m in enumerate(found) if hit(m.group())), 0)
    start = max(0, min(first - 2, len(found) - width))
    end = min(len(found), start + width)
    begin = found[start].start() if start > 0 else 0
    stop = found[end - 1].end() if end < len(found) else len(text)
    out, at = [], begin
    for match in found[start:end]:
        if hit(match.group()):
            out += [text[at : match.start()], "[", match.group(), "]"]
            at = match.end()
    out.append(text[at:stop])
    return ("…" if start > 0 else "") + "".join(out) + ("…" if end < len(found) else "")
