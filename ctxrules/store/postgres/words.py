"""The text search sees, split into words the way SQLite's FTS5 splits it.

PostgreSQL's own parser reads ``json.loads`` as a host name and ``src/a.py`` as a path;
splitting into runs of letters and digits here, for the index and the query alike, makes
both backends find the same nodes for the same words.
"""

from __future__ import annotations

import re
from collections import Counter
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
    """The words of ``text`` joined by one space: what the ``tsvector`` is built from.

    >>> words("Use json.loads: SRC/a_b.py")
    'use json loads src a b py'
    """
    # Case folding maps each character on its own (no context, unlike `str.lower`'s final
    # sigma), so folding the joined words is folding each: one call in C, not one a word.
    return " ".join(WORD.findall(text)).casefold()


def snippet(text: str, terms: frozenset[str], prefixes: frozenset[str], width: int = 16) -> str:
    """``text`` with each matching word in brackets, cut to ``width`` words around the best match.

    The window shown holds the most distinct query words (as FTS5's ``snippet`` prefers),
    then starts at the rarest, so a common word early in the text does not hide a rare one.

    >>> snippet("Use tomllib, not toml.", frozenset({"toml"}), frozenset())
    'Use tomllib, not [toml].'
    >>> snippet(" ".join(f"line {i}" for i in range(60)), frozenset({"line", "50"}), frozenset())
    '…49 [line] [50] [line] 51 [line] 52 [line] 53 [line] 54 [line] 55 [line] 56 [line]…'
    """
    found = list(WORD.finditer(text))

    def key(word: str) -> str | None:
        folded = word.casefold()
        if folded in terms:
            return folded
        return next((p for p in sorted(prefixes) if folded.startswith(p)), None)

    keys = [key(m.group()) for m in found]
    first = _best_window_hit(keys, width)
    start = max(0, min(first - 2, len(found) - width))
    end = min(len(found), start + width)
    begin = found[start].start() if start > 0 else 0
    stop = found[end - 1].end() if end < len(found) else len(text)
    out, at = [], begin
    for match, hit in zip(found[start:end], keys[start:end], strict=True):
        if hit is not None:
            out += [text[at : match.start()], "[", match.group(), "]"]
            at = match.end()
    out.append(text[at:stop])
    return ("…" if start > 0 else "") + "".join(out) + ("…" if end < len(found) else "")


#: Places of each query word a snippet considers starting from: a text that repeats a
#: word thousands of times would otherwise cost a window's count at each of them.
WINDOW_STARTS = 32


def _best_window_hit(keys: list[str | None], width: int) -> int:
    """The hit to show the window from: most distinct query words, then the rarest word, then first."""
    seen = Counter(k for k in keys if k is not None)
    if not seen:
        return 0
    considered: Counter[str] = Counter()
    hits = []
    for i, k in enumerate(keys):
        if k is not None and considered[k] < WINDOW_STARTS:
            considered[k] += 1
            hits.append(i)

    def rank(i: int) -> tuple[int, int, int]:
        start = max(0, min(i - 2, len(keys) - width))
        distinct = {k for k in keys[start : start + width] if k is not None}
        return len(distinct), -seen[keys[i] or ""], -i

    return max(hits, key=rank)
